import type { FastifyInstance, FastifyRequest } from 'fastify';

// When a client disconnects before its answer is sent, the statements its request started are
// cancelled (postgres/query-cancellation.ts). The HTTP side only knows this interface: a scope per
// request, entered before the handler runs, cancelled when the connection closes early.

export type RequestQueryScopes<Scope extends object = object> = {
  newScope(): Scope;
  /** Runs `next` and everything it awaits inside `scope`. */
  enter(scope: Scope, next: () => void): void;
  cancel(scope: Scope): Promise<void>;
};

export function installClientGoneCancellation(app: FastifyInstance, scopes: RequestQueryScopes): void {
  const byRequest = new WeakMap<FastifyRequest, object>();
  app.addHook('onRequest', (request, reply, done) => {
    const scope = scopes.newScope();
    byRequest.set(request, scope);
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) void scopes.cancel(scope);
    });
    scopes.enter(scope, done);
  });
  // Body parsing resumes in the stream's own async context: enter the scope again for the handler.
  app.addHook('preHandler', (request, _reply, done) => {
    const scope = byRequest.get(request);
    if (scope) scopes.enter(scope, done);
    else done();
  });
}
