// Requests to /api/v1. Every view change cancels the requests of the view before it.

/** @typedef {Record<string, string | number | string[] | object | undefined>} Params */

/** @param {Params} params */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === '') continue;
    if (Array.isArray(value)) {
      if (value.length > 0) search.set(key, value.join(','));
    } else search.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return search.toString();
}

export class ApiError extends Error {
  /** @param {number} status @param {string} message */
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/**
 * GET a JSON document from the API.
 * @param {string} path
 * @param {Params} params
 * @param {AbortSignal} [signal]
 * @returns {Promise<any>}
 */
export async function getJson(path, params, signal) {
  const response = await fetch(`${path}?${query(params)}`, {
    headers: { accept: 'application/json' },
    ...(signal ? { signal } : {}),
  });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = await response.json();
      if (body && typeof body.message === 'string') message = body.message;
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(response.status, message);
  }
  return response.json();
}

/** One view's requests: starting a new one aborts the previous. */
export class Requests {
  constructor() {
    /** @type {AbortController | null} */
    this.controller = null;
  }

  /** @returns {AbortSignal} */
  next() {
    this.controller?.abort();
    this.controller = new AbortController();
    return this.controller.signal;
  }
}

/** @param {unknown} error */
export function isAbort(error) {
  return error instanceof DOMException && error.name === 'AbortError';
}

/**
 * Points the page's download links (every export format of /api/v1/events: `data-download-format`)
 * at the events in view (`inView`, a query string; links `download-<format>`) and at all that match
 * the filters (`all`; links `download-all-<format>`).
 * @param {string} inView @param {string} all
 */
export function setDownloadLinks(inView, all) {
  for (const link of document.querySelectorAll('a[data-download-format]')) {
    if (!(link instanceof HTMLAnchorElement)) continue;
    const search = link.id.startsWith('download-all-') ? all : inView;
    link.href = `/api/v1/events.${link.dataset.downloadFormat}${search ? `?${search}` : ''}`;
  }
}

/** The formats whose first download of a large view may run in the background (a 202). */
const KEPT_FILE_FORMATS = ['gpkg', 'fgb', 'parquet', 'pmtiles'];

/**
 * Follows a background export (docs/api-v1.md, "Large first exports run in the background"): a
 * click on a kept-file format's link first asks with HEAD; a 202 names the status URL, which is
 * polled (progress in `#download-progress`) until it redirects to the file (done: the link is
 * clicked again, now answered by the kept file) or says failed (its reason shown). A 200 downloads
 * at once.
 * @param {HTMLElement} progress
 */
export function followBackgroundExports(progress) {
  /** @type {Set<string>} */
  const following = new Set();
  document.addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a[data-download-format]') : null;
    if (!(link instanceof HTMLAnchorElement)) return;
    if (!KEPT_FILE_FORMATS.includes(link.dataset.downloadFormat ?? '')) return;
    if (link.dataset.ready === link.href) {
      delete link.dataset.ready;
      return; // the file is kept: the browser downloads it
    }
    event.preventDefault();
    if (following.has(link.href)) return;
    following.add(link.href);
    const href = link.href;
    const label = link.textContent ?? '';
    const download = () => {
      link.dataset.ready = href;
      link.click();
    };
    (async () => {
      const first = await fetch(href, { method: 'HEAD', credentials: 'same-origin' });
      if (first.status !== 202) return download();
      const status = first.headers.get('location');
      if (!status) return download();
      for (;;) {
        const answer = await fetch(status, { credentials: 'same-origin', redirect: 'manual' });
        // A 303 to the file: fetch does not show it (an opaque redirect), which is the answer.
        if (answer.type === 'opaqueredirect' || answer.status === 303) {
          progress.textContent = `${label}: ready`;
          return download();
        }
        if (!answer.ok) {
          progress.textContent = `${label}: the export is gone (${answer.status})`;
          return;
        }
        const job = await answer.json();
        if (job.state === 'failed') {
          progress.textContent = `${label} failed: ${job.reason ?? 'unknown reason'}`;
          return;
        }
        progress.textContent =
          job.state === 'queued'
            ? `${label}: waiting to start (${job.estimated.toLocaleString()} events)`
            : `${label}: ${job.written.toLocaleString()} of ${job.estimated.toLocaleString()} events written`;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    })()
      .catch((error) => {
        progress.textContent = `${label}: ${error instanceof Error ? error.message : 'failed'}`;
      })
      .finally(() => following.delete(href));
  });
}
