import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ConcurrencyLedger } from '../../domain/accounts/concurrency.ts';
import type { ConcurrencyClass, ConcurrencyPolicy } from '../../domain/accounts/concurrency-policy.ts';
import { isCustomDateField } from '../../domain/read/read-query.ts';
import type { Clock } from '../../ports/clock.ts';
import { viewerOf } from './viewer.ts';

// The places of requests whose cost grows with the data (src/domain/accounts/concurrency.ts; issue 30
// §2), for the routes that say they are such with `config: { costly: <class> }`, or with a function
// of the query when only some of their requests are (a custom date field). The place is taken after
// authentication, validation and the request rate limit (so refused and bad requests take none) and
// given back when the answer is finished or the connection closes, whichever comes first: a streamed
// export keeps its place for as long as it streams.

/** A route's class, or a function of its query string that tells it per request (null: not costly). */
type Costly = ConcurrencyClass | ((query: Record<string, unknown>) => ConcurrencyClass | null);

declare module 'fastify' {
  interface FastifyContextConfig {
    costly?: Costly;
  }
}

/** For the /api/v1 reads that scan whatever the date filter touches: costly with a date field of `data`. */
export const costlyWithCustomDateField: Costly = (query) =>
  isCustomDateField(query.dateField) ? 'reads' : null;

function classOf(request: FastifyRequest): ConcurrencyClass | null {
  const costly = request.routeOptions.config.costly;
  if (typeof costly === 'function') return costly(request.query as Record<string, unknown>);
  return costly ?? null;
}

export function installConcurrencyLimits(
  app: FastifyInstance,
  deps: { policy: ConcurrencyPolicy; clock: Clock },
): void {
  const ledger = new ConcurrencyLedger(deps.policy);
  // preHandler, after the rate limits' own (installed before this one): a request refused there
  // never takes a place.
  app.addHook('preHandler', async (request, reply) => {
    const kind = classOf(request);
    if (kind === null) return;
    const release = ledger.take(kind, { viewer: viewerOf(request), address: request.ip }, deps.clock.now());
    const response = reply.raw;
    response.once('close', release);
    // A client gone before the hook ran: no 'close' is coming.
    if (response.destroyed || response.writableFinished) release();
  });
}
