import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';

// Each request runs in a query scope (postgres/query-cancellation.ts), entered before the handler
// runs, whose statements are cancelled, and which starts no new one, when
// - its client disconnects before its answer is sent;
// - it runs out of its time budget (issue 30 §5: a budget per request, not only per statement; a
//   histogram of two statements took 8.7 s against a 5 s budget). A read route has one: GET under
//   /api/v1 and /ogc the read budget, routes with `config: { timeBudget: 'collections' }` the
//   collection reads' budget; `timeBudget: false` opts out (a streamed export, whose every batch has
//   the statement budget and whose download takes as long as the client does). The budget counts
//   from the request's arrival (Fastify's handlerTimeout, routing to answer): when it runs out, the
//   answer is the 503 QUERY_TIMEOUT of a statement over its budget (database-errors.ts), at once,
//   and the statements still running are cancelled. Only reads have one: a write cut after its
//   commit would answer an error for a change that was made.
// The HTTP side only knows the interface below.

export type RequestQueryScopes<Scope extends object = object> = {
  newScope(): Scope;
  /** Runs `next` and everything it awaits inside `scope`. */
  enter(scope: Scope, next: () => void): void;
  cancel(scope: Scope): Promise<void>;
};

/** The time budgets of whole requests, in milliseconds (config/budget-config.ts). */
type RequestBudgets = { readMs: number; collectionsMs: number };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which request budget the route has; false: none (see above). */
    timeBudget?: 'read' | 'collections' | false;
  }
}

const READ_PREFIXES = ['/api/v1/', '/ogc/'];

/** The budget of a route in milliseconds, or null when it has none. */
function budgetOf(route: RouteOptions, budgets: RequestBudgets): number | null {
  const asked = (route.config as { timeBudget?: unknown } | undefined)?.timeBudget;
  if (asked === false) return null;
  if (asked === 'collections') return budgets.collectionsMs;
  if (asked === 'read') return budgets.readMs;
  const methods = [route.method].flat();
  const reads = methods.every((method) => method === 'GET' || method === 'HEAD');
  const path = route.url === '/ogc' ? '/ogc/' : route.url;
  return reads && READ_PREFIXES.some((prefix) => path.startsWith(prefix)) ? budgets.readMs : null;
}

/** Whether the request's signal was aborted by its time budget (not by its client going away). */
function outOfTime(request: FastifyRequest): boolean {
  const reason: unknown = request.signal.aborted ? request.signal.reason : undefined;
  return (reason as { code?: unknown } | undefined)?.code === 'FST_ERR_HANDLER_TIMEOUT';
}

export function installQueryScopes(
  app: FastifyInstance,
  scopes: RequestQueryScopes,
  budgets: RequestBudgets,
): void {
  const byRequest = new WeakMap<FastifyRequest, object>();

  // Before any route registers: each read route gets its budget, and a handler whose request ran out
  // of time ends quietly (the 503 is answered already; its statements fail as they are cancelled).
  app.addHook('onRoute', (route) => {
    const budget = budgetOf(route, budgets);
    if (budget === null) return;
    route.handlerTimeout = budget;
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      if (outOfTime(request)) return undefined;
      const answer: unknown = handler.call(this, request, reply);
      // A handler that answers by itself (no promise) is left as it is.
      if (!(answer instanceof Promise)) return answer;
      const late = () => outOfTime(request) && reply.sent;
      return answer.then(
        (value: unknown) => (late() ? undefined : value),
        (error: unknown) => {
          if (late()) return undefined;
          throw error;
        },
      );
    };
  });

  app.addHook('onRequest', (request, reply, done) => {
    const scope = scopes.newScope();
    byRequest.set(request, scope);
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) void scopes.cancel(scope);
    });
    if (request.routeOptions.handlerTimeout > 0) {
      request.signal.addEventListener(
        'abort',
        () => {
          if (outOfTime(request)) void scopes.cancel(scope);
        },
        { once: true },
      );
    }
    scopes.enter(scope, done);
  });
  // Body parsing resumes in the stream's own async context: enter the scope again for the handler.
  app.addHook('preHandler', (request, _reply, done) => {
    const scope = byRequest.get(request);
    if (scope) scopes.enter(scope, done);
    else done();
  });
}
