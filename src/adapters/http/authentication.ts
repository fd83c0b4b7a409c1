import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Authentication, authenticateToken, type LoginDeps } from '../../application/accounts/log-in.ts';
import { UnauthorizedError, type Viewer } from '../../domain/access.ts';
import {
  type ApiKeyDeps,
  authenticateApiKey,
  authorizeKeyRequest,
} from '../../application/accounts/api-keys.ts';
import { looksLikeApiKey } from '../../domain/accounts/api-keys.ts';

// Who is calling, decided once per request before any route runs: the `payload-token` cookie, or
// `Authorization: Bearer <token>` / `JWT <token>` (Payload's scheme). Requests without credentials
// cost nothing; a bad token makes the caller anonymous and routes that need a user say why. A bearer
// token that starts `cmk_` is an API key (application/accounts/api-keys.ts): the caller is its owner
// limited by the key, and a key that may not call the route at all is refused here with a 403.

export const TOKEN_COOKIE = 'payload-token';

declare module 'fastify' {
  interface FastifyRequest {
    viewer: Viewer;
    sessionId: string | null;
    tokenExp: number | null;
    /** Why credentials that were sent were not accepted. */
    authProblem: 'invalid' | 'expired' | 'revoked' | null;
  }
}

type AuthenticationDeps = Pick<LoginDeps, 'sessions' | 'tokens' | 'clock'> & { apiKeys: ApiKeyDeps };

function tokenFrom(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (header) {
    const match = /^(?:Bearer|JWT)\s+(\S+)$/i.exec(header);
    if (match?.[1]) return match[1];
  }
  return request.cookies[TOKEN_COOKIE] ?? null;
}

export function installAuthentication(app: FastifyInstance, deps: AuthenticationDeps): void {
  app.decorateRequest('viewer', null);
  app.decorateRequest('sessionId', null);
  app.decorateRequest('tokenExp', null);
  app.decorateRequest('authProblem', null);
  app.addHook('onRequest', async (request) => {
    const token = tokenFrom(request);
    if (!token) return;
    if (looksLikeApiKey(token)) {
      // Unlike a stale session token (anonymous on public routes), a bad key is always a 401: a
      // script whose key was revoked should stop, not quietly read less.
      const viewer = await authenticateApiKey(deps.apiKeys, token);
      if (!viewer) {
        const [message, code] = PROBLEMS.key;
        throw new UnauthorizedError(message, code);
      }
      request.viewer = viewer;
      authorizeKeyRequest(viewer, request.method, request.url);
      return;
    }
    const result: Authentication = await authenticateToken(deps, token);
    if (result.viewer) {
      request.viewer = result.viewer;
      request.sessionId = result.sessionId;
      request.tokenExp = result.exp;
    } else {
      request.authProblem = result.problem;
    }
  });
}

const PROBLEMS = {
  invalid: ['The token is not valid', 'TOKEN_INVALID'],
  expired: ['The token has expired; log in again', 'TOKEN_EXPIRED'],
  revoked: [
    'The session has ended (logged out, password changed or account deleted); log in again',
    'TOKEN_REVOKED',
  ],
  key: ['The API key is unknown or has been revoked', 'API_KEY_INVALID'],
} as const;

/** The logged-in user, or a 401 that says what was wrong with the credentials sent. */
export function requireUser(request: FastifyRequest): Exclude<Viewer, null> {
  if (request.viewer) return request.viewer;
  if (request.authProblem) {
    const [message, code] = PROBLEMS[request.authProblem];
    throw new UnauthorizedError(message, code);
  }
  throw new UnauthorizedError();
}

export function setTokenCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  exp: number,
): void {
  reply.setCookie(TOKEN_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    expires: new Date(exp * 1000),
  });
}

export function clearTokenCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(TOKEN_COOKIE, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
  });
}
