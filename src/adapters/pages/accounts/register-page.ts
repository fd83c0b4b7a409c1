import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { type LoginDeps, logIn } from '../../../application/accounts/log-in.ts';
import { registerAccount, REGISTRATION_MESSAGE } from '../../../application/accounts/register-account.ts';
import { getLegalNotices, type SiteNoticeDeps } from '../../../application/site/site-notices.ts';
import { DomainError } from '../../../domain/errors.ts';
import { withDefaults } from '../../../domain/site/feature-flags.ts';
import type { LegalNotices } from '../../../domain/site/site-notices.ts';
import { MIN_PASSWORD_LENGTH } from '../../../domain/accounts/users.ts';
import type { FeatureFlagStore } from '../../../ports/site/feature-flag-store.ts';
import { setTokenCookie } from '../../http/authentication.ts';
import { ACCOUNT_LOGIN, accountPages, hidden } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { verifiedForm } from '../csrf.ts';
import { type Html, html } from '../html.ts';
import type { Flash } from '../layout.ts';
import { redirect } from '../replies.ts';
import { viewerOf } from '../../http/viewer.ts';
import { pageErrorStatus } from '../../http/error-handling.ts';

// /account/register: the registration form of a person with a browser. It registers through the
// same use case as POST /api/auth/register (same checks, same enumeration-safe answer), shows the
// site's legal notices, and logs the new user in on the way to the import wizard.

type RegisterPageDeps = {
  login: LoginDeps;
  flags: FeatureFlagStore;
  notices: Pick<SiteNoticeDeps, 'settings'>;
  csrfSecret: string;
};

const PATH = '/account/register';
const WIZARD = '/account/imports/new';

function noticesView(notices: LegalNotices): Html {
  const links = [
    notices.termsUrl ? html`<a href="${notices.termsUrl}" rel="noopener">Terms of use</a>` : '',
    notices.privacyUrl ? html`<a href="${notices.privacyUrl}" rel="noopener">Privacy policy</a>` : '',
  ].filter((link) => link !== '');
  if (links.length === 0 && !notices.registrationDisclaimer && !notices.contactEmail) return html``;
  return html`<div class="legal-notices" id="legal-notices">
    ${notices.registrationDisclaimer ? html`<p id="registration-disclaimer">${notices.registrationDisclaimer}</p>` : ''}
    ${links.length > 0 ? html`<p>By registering you accept: ${links.map((link, i) => html`${i > 0 ? ' · ' : ''}${link}`)}</p>` : ''}
    ${
      notices.contactEmail
        ? html`<p>Contact: <a href="mailto:${notices.contactEmail}">${notices.contactEmail}</a></p>`
        : ''
    }
  </div>`;
}

function registerView(token: string, email: string, notices: LegalNotices): Html {
  return html`<div class="login card">
    <h1>Create an account</h1>
    <form method="post" action="${PATH}" class="stack">
      ${csrfInput(token)}
      <label
        >Email
        <input
          type="email"
          name="email"
          value="${email}"
          autocomplete="username"
          maxlength="254"
          required
          autofocus
      /></label>
      <label
        >Password
        <input
          type="password"
          name="password"
          autocomplete="new-password"
          minlength="${String(MIN_PASSWORD_LENGTH)}"
          maxlength="1024"
          required
          aria-describedby="password-hint"
      /></label>
      <small id="password-hint">At least ${String(MIN_PASSWORD_LENGTH)} characters.</small>
      ${noticesView(notices)}
      <button type="submit">Create account</button>
    </form>
    <p>Already registered? <a href="${ACCOUNT_LOGIN}">Log in</a></p>
  </div>`;
}

export const registerPage: FastifyPluginAsync<RegisterPageDeps> = async (app, deps) => {
  const { csrf, render } = accountPages(app, deps.csrfSecret, PATH);

  const answer = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    email: string,
    flash: Flash,
  ) => {
    const notices = await getLegalNotices(deps.notices);
    const body = registerView(csrf.token(request, reply), email, notices);
    return render(reply, status, 'Create an account', body, { flash });
  };

  app.get(PATH, hidden, async (request, reply) => {
    if (viewerOf(request)) return redirect(reply, WIZARD);
    return answer(request, reply, 200, '', {});
  });

  // Each registration costs a password hash: the per-IP request windows apply, as on the API route.
  app.post(PATH, { ...hidden, config: { rateLimit: true } }, async (request, reply) => {
    const form = verifiedForm(csrf, request);
    const email = (form.email ?? '').trim().slice(0, 320);
    const password = (form.password ?? '').slice(0, 1024);
    try {
      const flags = withDefaults(await deps.flags.read());
      await registerAccount(
        {
          users: deps.login.users,
          passwords: deps.login.passwords,
          defaultTrustLevel: deps.login.policy.defaultTrustLevel,
          registrationOpen: flags.enableRegistration,
        },
        { email, password },
      );
      // Logging in with the password just chosen tells no more than the API does (register, then
      // log in): it works for a new account or for the owner of an existing one; anyone else gets
      // the API's enumeration-safe answer, and the login's own throttling applies.
      const session = await logIn(deps.login, { email, password, clientIp: request.ip });
      setTokenCookie(request, reply, session.token, session.exp);
      return redirect(reply, WIZARD, { notice: 'Welcome: your account is ready. Import your first file.' });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.kind === 'unauthorized')
        return answer(request, reply, 200, email, { notice: REGISTRATION_MESSAGE });
      return answer(request, reply, pageErrorStatus(error, reply), email, { error: error.message });
    }
  });
};
