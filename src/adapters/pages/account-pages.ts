import { homeOf, SITE_NAV } from '../site-navigation.ts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/access.ts';
import { DomainError, NotFoundError, ValidationError } from '../../domain/errors.ts';
import { RateLimitedError } from '../../domain/accounts/rate-limits.ts';
import {
  acceptForms,
  CsrfError,
  type Csrf,
  csrfProtection,
  csrfRefusal,
  type Form,
  verifiedForm,
} from './csrf.ts';
import { type Html, html } from './html.ts';
import { type Flash, page } from './layout.ts';
import { htmlReply, redirect } from './replies.ts';
import { messageView } from './layout.ts';
import { viewerOf } from '../http/viewer.ts';
import { pageFailure } from '../http/error-handling.ts';

// The frame of the /account import pages (the wizard, my imports, scheduled imports): one
// navigation bar, the /account login (which sends the visitor back to the page they asked for),
// form posts with the /account CSRF token answered by a redirect with a flash message, and errors
// as pages. Each page plugin calls `accountPages` once inside its own encapsulated context.

export type User = Exclude<Viewer, null>;

export const ACCOUNT_LOGIN = '/account/login';
export const hidden = { schema: { hide: true } };

/** A table's header row. */
export const headRow = (...labels: string[]) =>
  html`<thead>
    <tr>
      ${labels.map((label) => html`<th>${label}</th>`)}
    </tr>
  </thead>`;

type AccountPages = {
  csrf: Csrf;
  render(
    reply: FastifyReply,
    status: number,
    title: string,
    body: Html,
    extra?: { user?: User; token?: string; flash?: Flash; active?: string; scripts?: boolean },
  ): FastifyReply;
  /** The logged-in user, or null after a redirect to the login (which comes back to `path`). */
  user(request: FastifyRequest, reply: FastifyReply, path: string): User | null;
  /** A form post of a logged-in user: the handler's notice (or a refusal's message) flashed on `back`. */
  action(
    path: string,
    back: string | ((user: User, id: number) => string),
    handler: (user: User, id: number, form: Form, reply: FastifyReply) => Promise<string>,
    csrf?: Csrf,
  ): void;
};

/** A record id from the path: anything but a positive integer a bigint holds is the 404 page. */
export function recordId(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id)) throw new NotFoundError(`no record ${raw.slice(0, 20)}`);
  return id;
}

/** A text field of a form, trimmed, refused past `max` characters (the API's limits). */
export function formText(form: Form, name: string, max: number): string {
  const value = (form[name] ?? '').trim();
  if (value.length > max)
    throw new ValidationError(`${name} must be at most ${max} characters`, { field: name });
  return value;
}

type Render = (reply: FastifyReply, status: number, title: string, body: Html) => FastifyReply;

/**
 * Errors of a page area as pages: an expired form is a 403 "form expired", a refused request its
 * message with the API's status for it (pageFailure: a database that is gone a 503), anything
 * else a logged 500.
 */
function installPageErrors(app: FastifyInstance, render: Render, back: [string, string]): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof CsrfError) {
      const [title, heading, text] = csrfRefusal(error, 'this page');
      return render(reply, 403, title, messageView(heading, text, back));
    }
    const { status, heading, message } = pageFailure(error, reply);
    if (status >= 500) request.log.error({ err: error }, 'page request failed');
    return render(reply, status, 'Error', messageView(heading, message, back));
  });
}

export function accountPages(app: FastifyInstance, csrfSecret: string, home: string): AccountPages {
  const csrf = csrfProtection(csrfSecret, '/account');
  acceptForms(app);

  const render: AccountPages['render'] = (reply, status, title, body, extra = {}) =>
    htmlReply(reply, status, { scripts: extra.scripts ?? false }).send(
      page({
        title,
        body,
        user: extra.user ?? null,
        nav: extra.user?.role === 'admin' ? [['/dashboard', 'Dashboard'], ...SITE_NAV] : [...SITE_NAV],
        brand: homeOf(extra.user?.role),
        logoutAction: '/account/logout',
        active: extra.active ?? home,
        ...(extra.token ? { csrf: extra.token } : {}),
        ...(extra.flash ? { flash: extra.flash } : {}),
      }),
    );

  installPageErrors(app, render, [home, 'Back']);

  const user: AccountPages['user'] = (request, reply, path) => {
    const viewer = viewerOf(request);
    if (viewer) return viewer;
    void redirect(reply, `${ACCOUNT_LOGIN}?next=${encodeURIComponent(path)}`);
    return null;
  };

  const action: AccountPages['action'] = (path, back, handler, formCsrf = csrf) => {
    app.post(path, hidden, async (request, reply) => {
      const caller = user(request, reply, typeof back === 'string' ? back : home);
      if (!caller) return reply;
      const form = verifiedForm(formCsrf, request);
      const id = recordId((request.params as { id?: string }).id);
      const target = typeof back === 'string' ? back : back(caller, id);
      try {
        const notice = await handler(caller, id, form, reply);
        // A handler that answered with a page of its own (a credential shown once) is done.
        if (reply.sent) return reply;
        return redirect(reply, target, { notice });
      } catch (error) {
        // A refused action (not in that state, not retryable, a bad setting) comes back in words;
        // someone else's record is the 404 page, as in the API.
        if (
          error instanceof DomainError &&
          error.kind !== 'not_found' &&
          !(error instanceof RateLimitedError)
        )
          return redirect(reply, target, { error: error.message });
        throw error;
      }
    });
  };

  return { csrf, render, user, action };
}
