import type { FastifyInstance } from 'fastify';
import { requireUser } from './authentication.ts';

// Routes that need a logged-in caller say so with `config: { requiresUser: true }`: anonymous calls
// (and calls with an expired, revoked or forged token) are answered 401 before the request is
// validated or anything is looked up, so a malformed id or body tells an anonymous caller nothing.
// The use cases check again (domain/access.ts); this only puts authentication first.

declare module 'fastify' {
  interface FastifyContextConfig {
    requiresUser?: boolean;
  }
}

export const USER_ONLY = { requiresUser: true } as const;

export function installRequireUser(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.config?.requiresUser) requireUser(request);
  });
}
