import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Lsn } from '../../domain/read/replica-choice.ts';
import { formatLsn, parseLsn } from '../postgres/wal-position.ts';

// Read-your-writes with read replicas (docs/scaling.md, "Read replicas"). After a request that may
// have written (any unsafe method, and a logged-in caller's reads outside /api/v1, such as an
// import's progress), the answer carries the primary's WAL position: a cookie for browsers and an
// `X-Chronomap-LSN` header that API clients send back as `X-Chronomap-Min-LSN`. A later read that
// carries a position is answered only by a standby that has replayed it, else by the primary.

export type ReadYourWrites = {
  /** Runs the rest of the request with the caller's last write position (null: none). */
  enter(mustHave: Lsn | null, next: () => void): void;
  /** The primary's WAL position now. */
  primaryPosition(): Promise<Lsn | null>;
};

const LSN_COOKIE = 'chronomap-lsn';
const COOKIE_SECONDS = 600;

export function installReadYourWrites(app: FastifyInstance, deps: ReadYourWrites): void {
  app.addHook('onRequest', (request, _reply, done) => deps.enter(callerPosition(request), done));
  app.addHook('onSend', async (request, reply, payload) => {
    if (!mayHaveWritten(request)) return payload;
    const lsn = await deps.primaryPosition().catch(() => null);
    if (lsn === null) return payload;
    const text = formatLsn(lsn);
    reply.header('x-chronomap-lsn', text);
    const cookie = `${LSN_COOKIE}=${text}; Path=/; Max-Age=${COOKIE_SECONDS}; SameSite=Lax; HttpOnly`;
    const existing = reply.getHeader('set-cookie');
    reply.header('set-cookie', [
      ...(Array.isArray(existing) ? existing : existing ? [String(existing)] : []),
      cookie,
    ]);
    return payload;
  });
}

/** The largest valid position the caller sent (cookie or header); anything malformed is ignored. */
function callerPosition(request: FastifyRequest): Lsn | null {
  const header = request.headers['x-chronomap-min-lsn'];
  const cookie = /(?:^|;\s*)chronomap-lsn=([0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8})(?:;|$)/.exec(
    request.headers.cookie ?? '',
  )?.[1];
  const positions = [typeof header === 'string' ? header : '', cookie ?? '']
    .map(parseLsn)
    .filter((lsn): lsn is Lsn => lsn !== null);
  return positions.length === 0 ? null : positions.reduce((a, b) => (a > b ? a : b));
}

function mayHaveWritten(request: FastifyRequest): boolean {
  if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method)) return true;
  const loggedIn =
    Boolean(request.headers.authorization) || /payload-token=/.test(request.headers.cookie ?? '');
  return loggedIn && !request.url.startsWith('/api/v1/') && request.url.startsWith('/api/');
}
