import type { FastifyInstance } from 'fastify';

// An API's drain on shutdown is bounded (issue 32 §2): fastify's close() stops accepting
// connections, answers 503 to new requests on kept-alive ones and waits for the requests in flight,
// and one long export held a SIGTERMed API for as long as it took. After HTTP_DRAIN_MS the
// connections still open are closed: a response still being sent is cut without its end (no last
// chunk of a chunked body, fewer bytes than its content-length), which every HTTP client reports as
// a broken transfer rather than a complete one, and the statements of its request are cancelled
// (its client is gone: query-cancellation.ts). docs/operations.md, "Stopping".

/** How long requests in flight get to finish after a shutdown begins. */
export const HTTP_DRAIN_MS = 5_000;

/** Closes `app`, cutting what still runs after `boundMs`; resolves to whether anything was cut. */
export async function drainWithin(app: FastifyInstance, boundMs = HTTP_DRAIN_MS): Promise<boolean> {
  let cut = false;
  const timer = setTimeout(() => {
    cut = true;
    app.server.closeAllConnections();
  }, boundMs);
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
  return cut;
}
