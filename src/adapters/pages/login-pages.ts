import type { FastifyInstance, FastifyReply } from 'fastify';
import { type LoginDeps, logIn } from '../../application/accounts/log-in.ts';
import type { Viewer } from '../../domain/access.ts';
import { DomainError, ValidationError } from '../../domain/errors.ts';
import { clearTokenCookie, setTokenCookie } from '../http/authentication.ts';
import { type Csrf, csrfInput, verifiedForm } from './csrf.ts';
import { flashFrom, redirect } from './replies.ts';
import { type Html, html } from './html.ts';
import type { Flash } from './layout.ts';
import { viewerOf } from '../http/viewer.ts';
import { pageErrorStatus } from '../http/error-handling.ts';

// The login form and the logout post of a server-rendered area (the admin dashboard, the
// /account pages): one pair of handlers, so both areas log in through the same use case, with the
// same throttling, cookie and answers (401 wrong credentials, 429 with Retry-After when throttled).

type LoginPages = {
  login: LoginDeps;
  csrf: Csrf;
  paths: { login: string; logout: string; home: string };
  heading: string;
  /** The area's registration page, linked from its login form. */
  registerPath?: string;
  /** Why a user may not use this area (their new session ends at once), or null when they may. */
  refuse?: (user: Exclude<Viewer, null>) => string | null;
  /** The area's page around a login form. */
  render: (reply: FastifyReply, status: number, body: Html, flash: Flash) => FastifyReply;
};

/**
 * Where to go after logging in when a page sent the visitor here (`?next=/account/imports`): only a
 * path of this area's own pages, never another host (`//host`, `/\\host`) or a scheme.
 */
export function safeNext(value: unknown, home: string): string | null {
  if (typeof value !== 'string' || value.length > 100) return null;
  const area = home.slice(0, home.indexOf('/', 1) + 1);
  return area.length > 1 && value.startsWith(area) && /^\/[a-z]+(\/[a-z0-9-]+)*$/.test(value) ? value : null;
}

/** The login form's bounds: the API login's (POST /api/users/login). */
const LOGIN_LIMITS = { email: 320, password: 1024 };

export function registerLoginPages(app: FastifyInstance, pages: LoginPages): void {
  const hidden = { schema: { hide: true } };
  const { paths } = pages;
  const form = (token: string, email = '', next: string | null = null) =>
    loginView(token, email, {
      action: paths.login,
      heading: pages.heading,
      next,
      ...(pages.registerPath ? { register: pages.registerPath } : {}),
    });

  app.get(paths.login, hidden, async (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next, paths.home);
    const viewer = viewerOf(request);
    if (viewer && !pages.refuse?.(viewer)) return redirect(reply, next ?? paths.home);
    return pages.render(reply, 200, form(pages.csrf.token(request, reply), '', next), flashFrom(request));
  });

  app.post(paths.login, hidden, async (request, reply) => {
    const body = verifiedForm(pages.csrf, request);
    const email = (body.email ?? '').trim().slice(0, LOGIN_LIMITS.email + 1);
    const password = body.password ?? '';
    const next = safeNext(body.next, paths.home);
    try {
      // The API's bounds (its body schema): a longer email would also make a rate-limit key over
      // the index's row size, a 500 (found by the page fuzzer).
      if (email.length > LOGIN_LIMITS.email || password.length > LOGIN_LIMITS.password)
        throw new ValidationError(
          `the email may be at most ${LOGIN_LIMITS.email} characters and the password ${LOGIN_LIMITS.password}`,
          { field: email.length > LOGIN_LIMITS.email ? 'email' : 'password' },
        );
      const result = await logIn(pages.login, { email, password, clientIp: request.ip });
      const refusal = pages.refuse?.(result.user) ?? null;
      if (refusal) {
        await pages.login.sessions.revoke(result.sessionId);
        return pages.render(reply, 403, form(pages.csrf.token(request, reply), email, next), {
          error: refusal,
        });
      }
      setTokenCookie(request, reply, result.token, result.exp);
      return redirect(reply, next ?? paths.home);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      // Wrong credentials are 401, throttling 429 with its headers: the API's statuses.
      return pages.render(
        reply,
        pageErrorStatus(error, reply),
        form(pages.csrf.token(request, reply), email, next),
        {
          error: error.message,
        },
      );
    }
  });

  app.post(paths.logout, hidden, async (request, reply) => {
    verifiedForm(pages.csrf, request);
    if (request.sessionId) await pages.login.sessions.revoke(request.sessionId);
    clearTokenCookie(request, reply);
    return redirect(reply, paths.login, { notice: 'You are logged out.' });
  });
}

/** The login form of an area (the dashboard's, the account pages'). */
function loginView(
  csrf: string,
  email = '',
  target: { action: string; heading: string; next?: string | null; register?: string } = {
    action: '/dashboard/login',
    heading: 'Dashboard login',
  },
): Html {
  return html`<div class="login card">
    <h1>${target.heading}</h1>
    <form method="post" action="${target.action}" class="stack">
      ${csrfInput(csrf)}
      ${target.next ? html`<input type="hidden" name="next" value="${target.next}" />` : ''}
      <label
        >Email <input type="email" name="email" value="${email}" autocomplete="username" required autofocus
      /></label>
      <label
        >Password <input type="password" name="password" autocomplete="current-password" required
      /></label>
      <button type="submit">Log in</button>
    </form>
    ${target.register ? html`<p>New here? <a href="${target.register}">Create an account</a></p>` : ''}
  </div>`;
}
