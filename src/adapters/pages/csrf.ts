import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Html, html } from './html.ts';

// CSRF protection for the dashboard's forms: a random value in an HttpOnly, SameSite=Strict cookie,
// and in every form an HMAC of that value and the login session. A forged cross-site post has
// neither the cookie's value nor the secret, so it cannot produce the token.

const CSRF_COOKIE = 'chronomap-csrf';
const CSRF_FIELD = '_csrf';

/** The hidden field every form of every page carries (one definition for all the pages). */
export const csrfInput = (token: string): Html =>
  html`<input type="hidden" name="${CSRF_FIELD}" value="${token}" />`;

export type Csrf = {
  /** The token for forms on this page; sets the cookie when the browser has none yet. */
  token(request: FastifyRequest, reply: FastifyReply): string;
  verify(request: FastifyRequest, submitted: unknown): boolean;
};

/** `cookiePath`: the pages whose forms use the tokens (the dashboard, or /account). */
export function csrfProtection(secret: string, cookiePath = '/dashboard'): Csrf {
  const key = createHmac('sha256', secret).update('chronomap dashboard csrf').digest();
  const sign = (nonce: string, sessionId: string | null) =>
    createHmac('sha256', key)
      .update(`${nonce}|${sessionId ?? ''}`)
      .digest('base64url');
  return {
    token(request, reply) {
      let nonce = request.cookies[CSRF_COOKIE];
      if (!nonce || !/^[A-Za-z0-9_-]{43}$/.test(nonce)) {
        nonce = randomBytes(32).toString('base64url');
        reply.setCookie(CSRF_COOKIE, nonce, {
          path: cookiePath,
          httpOnly: true,
          sameSite: 'strict',
          secure: request.protocol === 'https',
        });
        // Later forms on this response read the same value.
        request.cookies[CSRF_COOKIE] = nonce;
      }
      return sign(nonce, request.sessionId);
    },
    verify(request, submitted) {
      const nonce = request.cookies[CSRF_COOKIE];
      if (!nonce || typeof submitted !== 'string') return false;
      const expected = Buffer.from(sign(nonce, request.sessionId));
      const given = Buffer.from(submitted);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** A form post whose token did not verify; the page plugins answer it with a 403 page. */
export class CsrfError extends Error {}

export type Form = Record<string, string | undefined>;

/** The posted form, once its CSRF token verified. */
export function verifiedForm(csrf: Csrf, request: FastifyRequest): Form {
  const body = (request.body ?? {}) as Form;
  if (!csrf.verify(request, body[CSRF_FIELD])) throw new CsrfError();
  return body;
}

/** Forms post application/x-www-form-urlencoded; call inside the page plugin, so the API never parses it. */
export function acceptForms(app: FastifyInstance): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );
}
