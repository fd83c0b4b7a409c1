// The Explore page's download menu: its links follow the view, and a large first export of a
// kept-file format, which the API runs in the background (a 202), is followed to its file.

import { query } from './api.js';

/**
 * The export links follow the view (issue 28 §6): the list's filters, dates and box, and the same
 * without the box, for the whole of what the filters select (a data set the map cannot show at once).
 * @param {import("./api.js").Params} params the filters and dates @param {object} bounds the box (the API's bounds)
 */
export function pointDownloadLinks(params, bounds) {
  setDownloadLinks(query({ ...params, bounds }), query(params));
}

/**
 * Points the page's download links (every export format of /api/v1/events: `data-download-format`)
 * at the events in view (`inView`, a query string; links `download-<format>`) and at all that match
 * the filters (`all`; links `download-all-<format>`).
 * @param {string} inView @param {string} all
 */
function setDownloadLinks(inView, all) {
  for (const link of document.querySelectorAll('a[data-download-format]')) {
    if (!(link instanceof HTMLAnchorElement)) continue;
    const search = link.id.startsWith('download-all-') ? all : inView;
    link.href = `/api/v1/events.${link.dataset.downloadFormat}${search ? `?${search}` : ''}`;
  }
}

/** The formats whose first download of a large view may run in the background (a 202). */
const KEPT_FILE_FORMATS = ['gpkg', 'fgb', 'parquet', 'pmtiles'];
/** Each request of the follow-up is bounded; an unanswered one ends the following with its reason. */
const FOLLOW_REQUEST_MS = 15_000;
/** The page stops asking after this long (the job goes on: a click later follows it again). */
const FOLLOW_LIMIT_MS = 60 * 60_000;

/**
 * Follows a background export (docs/api-v1.md, "Large first exports run in the background"): a
 * click on a kept-file format's link first asks with HEAD; a 202 names the status URL, which is
 * polled (progress in `#download-progress`; every 1 s, slowing to every 5 s; each request bounded)
 * until it redirects to the file (done: the link is clicked again, now answered by the kept file),
 * says failed (its reason shown), or an hour has passed. A 200 downloads at once.
 * @param {HTMLElement | null} progress (no menu on the page: nothing to follow)
 */
export function followBackgroundExports(progress) {
  if (!progress) return;
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
      const bounded = () => AbortSignal.timeout(FOLLOW_REQUEST_MS);
      const first = await fetch(href, { method: 'HEAD', credentials: 'same-origin', signal: bounded() });
      if (first.status !== 202) return download();
      const status = first.headers.get('location');
      if (!status) return download();
      const until = Date.now() + FOLLOW_LIMIT_MS;
      for (let wait = 1000; ; wait = Math.min(wait * 1.5, 5000)) {
        if (Date.now() > until) {
          progress.textContent = `${label}: still being written after an hour; click the link again later`;
          return;
        }
        const answer = await fetch(status, {
          credentials: 'same-origin',
          redirect: 'manual',
          signal: bounded(),
        });
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
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    })()
      .catch((error) => {
        progress.textContent = `${label}: ${error instanceof Error ? error.message : 'failed'}`;
      })
      .finally(() => following.delete(href));
  });
}
