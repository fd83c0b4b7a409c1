import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isSafeRequestId, withRequestId } from '../request-context.ts';

// What a request leaves in the log, and the id that ties its lines together (issue 31 §6):
// - the id is a UUID, unique across processes and restarts (Fastify's default is a per-process
//   counter, so "req-7" named a different request in each of N processes), or the caller's own
//   X-Request-Id when a proxy in front already gave one (a safe token: letters, digits and ._:-,
//   at most 128 characters; anything else is replaced, never logged); it is sent back as
//   X-Request-Id on every answer, and the request's work runs with it (request-context.ts: the
//   scraper runner is sent it);
// - the URL logged has its secrets redacted: a webhook token in the path, and query values of
//   parameters named like token, secret, password or key;
// - one line per finished request (Fastify's two, "incoming request" and "request completed", are
//   off): at info, except health and liveness checks, which a load balancer sends every few seconds
//   (12-14 % of all lines measured) and which go at debug.

/** Fastify's genReqId: the caller's X-Request-Id when it is a safe token, else a new UUID. */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return isSafeRequestId(given) ? given : randomUUID();
}

const SECRET_PATH = /^(\/api\/webhooks\/trigger\/)[^/?#]+/;
const SECRET_PARAM = /token|secret|password|passwd|key|signature/i;

/** The URL as it may be logged: path tokens and secret-looking query values replaced. */
export function redactedUrl(url: string): string {
  const [path = '', query] = url.split(/\?(.*)/s, 2);
  const safePath = path.replace(SECRET_PATH, '$1[redacted]');
  if (query === undefined) return safePath;
  const params = query.split('&').map((pair) => {
    const [name = '', value] = pair.split(/=(.*)/s, 2);
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replaceAll('+', ' '));
    } catch {
      // a malformed name is logged as sent
    }
    return value !== undefined && SECRET_PARAM.test(decoded) ? `${name}=[redacted]` : pair;
  });
  return `${safePath}?${params.join('&')}`;
}

const CHECK_PATHS = new Set(['/api/health', '/api/live']);

function isHealthCheck(request: FastifyRequest): boolean {
  return CHECK_PATHS.has(request.url.split('?')[0] ?? '');
}

export function installRequestLogging(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    withRequestId(request.id, done);
  });
  // Body parsing resumes in the stream's own async context: enter the id again for the handler.
  app.addHook('preHandler', (request, _reply, done) => withRequestId(request.id, done));
  app.addHook('onResponse', async (request, reply) => {
    const line = {
      method: request.method,
      url: redactedUrl(request.url),
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (isHealthCheck(request)) request.log.debug(line, 'request completed');
    else request.log.info(line, 'request completed');
  });
}
