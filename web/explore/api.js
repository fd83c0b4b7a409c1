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
