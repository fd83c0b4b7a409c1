import type { FastifyInstance, FastifyRequest } from 'fastify';
import { addVary } from './http-caching.ts';

// The absolute address the service writes into every link a client follows on its own: the OGC API
// links, TileJSON's tile URLs, a schedule's webhook URL, the scraper helper's install line. With
// PUBLIC_BASE_URL set (production), that setting and nothing else: a request's Host header never
// becomes a link another client is served. Without it (development, tests), the address the client
// reached, but only a Host that is a plain name or address with an optional port, and the answer
// then says `Vary: Host` (issue 30 §7): a shared cache in front (answers of /ogc and tiles.json are
// `Cache-Control: public`) keeps one copy per Host instead of serving one client's Host to all.

declare module 'fastify' {
  interface FastifyInstance {
    publicBaseUrl: string | undefined;
  }
}

/** A host as a client may send it (name or address, optional port): anything else is not echoed. */
const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$/;

/** Requests whose answer holds an address made from their Host header. */
const fromHost = new WeakSet<FastifyRequest>();

export function installPublicBaseUrl(app: FastifyInstance, configured: string | undefined): void {
  app.decorate('publicBaseUrl', configured);
  if (configured) return;
  // A callback hook, not an async one: an async onSend defers every answer's sending by a tick, and
  // a page that renders and then checks whether it has answered (the scraper webhook form) would not see it.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (fromHost.has(request)) addVary(reply, ['Host']);
    done(null, payload);
  });
}

/** Scheme, host and any path prefix of the service as its links should name it, without a trailing slash. */
export function publicOrigin(request: FastifyRequest): string {
  const configured = request.server.publicBaseUrl;
  if (configured) return configured;
  fromHost.add(request);
  const host = HOST.test(request.host) ? request.host : 'localhost';
  const scheme = request.protocol === 'https' ? 'https' : 'http';
  // URL's origin drops a default port (`:80` on http), as every client writes the address.
  return URL.canParse(`${scheme}://${host}`)
    ? new URL(`${scheme}://${host}`).origin
    : `${scheme}://localhost`;
}

/** Where a webhook token is posted to (scrapers and scheduled imports), for the one time it is shown. */
export function webhookUrl(request: FastifyRequest, token: string): string {
  return `${publicOrigin(request)}/api/webhooks/trigger/${token}`;
}
