import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Html, html } from './html.ts';

// CSRF protection for the dashboard's forms: a random value in an HttpOnly, SameSite=Strict cookie,
// and in every form an HMAC of that value and the login session. A forged cross-site post has
// neither the cookie's value nor the secret, so it cannot produce the token.
//
// And, as OWASP advises beside a token, the post's source is checked (issue 30 §7): a form post
// whose `Origin` (or, without one, `Referer`) names another origin than the service's is refused
// before its token is looked at. The service's origin is PUBLIC_BASE_URL's when it is set; without
// it, the Host the request reached (host and port; the scheme is not compared, since a proxy in
// front may end TLS without saying so). `Origin: null` (a sandboxed frame, a redirect across
// origins) is refused. A post with neither header (old browsers, privacy tools that strip Referer)
// is judged by its token alone.

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
      const foreign = foreignSource(request);
      if (foreign !== null) throw new CsrfError(foreign);
      const nonce = request.cookies[CSRF_COOKIE];
      if (!nonce || typeof submitted !== 'string') return false;
      const expected = Buffer.from(sign(nonce, request.sessionId));
      const given = Buffer.from(submitted);
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

/** A form post whose token did not verify; the page plugins answer it with a 403 page. */
export class CsrfError extends Error {
  /** Set when the post came from another site: the origin it named. */
  readonly crossOrigin: string | null;

  constructor(crossOrigin: string | null = null) {
    super(
      crossOrigin ? `a form post from another origin (${crossOrigin})` : 'a form post without a valid token',
    );
    this.crossOrigin = crossOrigin;
  }
}

/** Title, heading and text of the 403 page for a refused form post (`where`: "this page"). */
export function csrfRefusal(error: CsrfError, where: string): [string, string, string] {
  if (error.crossOrigin !== null)
    return [
      'Form refused',
      'This form was sent from another site',
      `The post came from ${error.crossOrigin}, not from ${where}: it was not sent. If you meant to send it, open ${where} here and send it from there.`,
    ];
  return [
    'Form expired',
    'This form has expired',
    `The form was not sent from ${where}, or it is too old. Go back, reload the page and try again.`,
  ];
}

/** The host (and port) of an origin or URL as browsers send them, or null when it is not one. */
function hostOf(value: string): string | null {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.host.toLowerCase() : null;
}

/** The origin a form post names (`Origin`, else `Referer`) when it is not the service's; null when it is or names none. */
function foreignSource(request: FastifyRequest): string | null {
  const origin = request.headers.origin;
  const referer = request.headers.referer;
  const source = typeof origin === 'string' ? origin : typeof referer === 'string' ? referer : null;
  if (source === null) return null;
  if (source === 'null') return 'null';
  const configured = request.server.publicBaseUrl;
  // `http://localhost:80` and `http://localhost` are one origin: URL drops a scheme's default port.
  const ours = configured
    ? new URL(configured).host.toLowerCase()
    : hostOf(`${request.protocol}://${request.host}`);
  const theirs = hostOf(source);
  if (configured && theirs !== null && new URL(source).protocol !== new URL(configured).protocol)
    return new URL(source).origin;
  return theirs === ours ? null : theirs === null ? source.slice(0, 100) : new URL(source).origin;
}

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
