import { AsyncLocalStorage } from 'node:async_hooks';

// The request id the running code works for (issue 31 §6): the HTTP adapter enters it for each
// request (http/request-logging.ts), a job queued by a request carries it into its worker
// (jobs/scraper-jobs.ts), and the runner client sends it on as X-Request-Id, so the runner's log
// lines of a run name the request that asked for it.

/** A request id from outside is kept only when it is a short token of letters, digits and `._:-`. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function isSafeRequestId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_REQUEST_ID.test(value);
}

const storage = new AsyncLocalStorage<string>();

/** The id of the request being served, or of the request that queued the job being run. */
export function currentRequestId(): string | undefined {
  return storage.getStore();
}

/** Runs `work` (and all it awaits) as done for request `id`; without an id, for none. */
export function withRequestId<T>(id: string | undefined, work: () => T): T {
  return id === undefined ? storage.exit(work) : storage.run(id, work);
}
