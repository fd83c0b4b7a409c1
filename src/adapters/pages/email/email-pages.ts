import type { FastifyPluginAsync } from 'fastify';
import type { EmailAddresses } from '../../../application/email/email-addresses.ts';
import { SOURCE_HEALTH_STREAM } from '../../../domain/email/address.ts';
import type { EmailAddressView } from '../../../ports/email/email-store.ts';
import { accountPages, formText, headRow, hidden } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { type Html, html } from '../html.ts';
import { flashFrom } from '../replies.ts';

// /account/email: the caller's e-mail addresses (add, resend the confirmation, remove, the latest
// mail's status with its SMTP error), and the public token pages: /email/confirm/<token> and
// /email/unsubscribe/<token>, whose token is the only authority (no session, no CSRF token: a mail
// client's RFC 8058 one-click POST carries neither). An unknown token is the 404 page.

type EmailPagesDeps = { email: EmailAddresses; csrfSecret: string; kick: () => Promise<void> };

const HOME = '/account/email';

function status(address: EmailAddressView): Html {
  const mail = address.lastMail;
  const last = mail
    ? html` · last mail
      ${mail.status}${mail.error ? html` <span class="muted email-error">(${mail.error})</span>` : ''}`
    : '';
  return html`${address.confirmed ? html`<span class="badge success">confirmed</span>` : html`<span class="badge pending">awaiting confirmation</span>`}${last}`;
}

function addressRows(token: string, addresses: EmailAddressView[]): Html {
  if (addresses.length === 0) return html`<p class="muted" id="email-none">No addresses yet.</p>`;
  return html`<table id="email-addresses">
    ${headRow('Address', 'Status', '')}
    <tbody>
      ${addresses.map(
        (address) =>
          html`<tr data-email-address="${address.id}">
            <td>${address.address}</td>
            <td>${status(address)}</td>
            <td>
              ${
                address.confirmed
                  ? ''
                  : html`<form method="post" action="${HOME}/resend" class="inline">
                      ${csrfInput(token)}<input type="hidden" name="address" value="${address.id}" />
                      <button type="submit">Resend confirmation</button>
                    </form>`
              }
              <form method="post" action="${HOME}/remove" class="inline">
                ${csrfInput(token)}<input type="hidden" name="address" value="${address.id}" />
                <button type="submit" class="danger">Remove</button>
              </form>
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function emailView(token: string, enabled: boolean, addresses: EmailAddressView[]): Html {
  if (!enabled)
    return html`<h1>E-mail addresses</h1>
      <p id="email-disabled" class="card">
        E-mail is off on this server (no SMTP_URL is configured): no address can be added and nothing is sent.
        Source-health alerts still appear on your account pages.
      </p>`;
  return html`<h1>E-mail addresses</h1>
    <p>
      Source-health alerts and subscription digests go to confirmed addresses only. Each mail has a link that
      stops its kind of mail at once.
    </p>
    ${addressRows(token, addresses)}
    <h2>Add an address</h2>
    <form method="post" action="${HOME}" class="card" id="email-add">
      ${csrfInput(token)}
      <p>
        <label>Address <input name="address" type="email" required maxlength="254" /></label>
      </p>
      <button type="submit" id="email-add-submit">Add and send confirmation</button>
    </form>`;
}

function streamName(stream: string): string {
  return stream === SOURCE_HEALTH_STREAM ? 'source-health alerts' : 'this subscription’s digests';
}

export const emailPages: FastifyPluginAsync<EmailPagesDeps> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, '/account');
  const { email } = deps;
  // RFC 8058 lets a mail client post its one-click body as multipart/form-data too; the body says
  // nothing the token does not, so it is read and dropped (in this plugin only).
  if (!app.hasContentTypeParser('multipart/form-data'))
    app.addContentTypeParser('multipart/form-data', { parseAs: 'string', bodyLimit: 4096 }, (_r, _b, done) =>
      done(null, {}),
    );

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const addresses = email.enabled ? await email.list(user.id) : [];
    return pages.render(reply, 200, 'E-mail addresses', emailView(token, email.enabled, addresses), {
      user,
      token,
      flash: flashFrom(request),
    });
  });

  pages.action(HOME, HOME, async (user, _id, form) => {
    await email.add(user.id, formText(form, 'address', 254));
    await deps.kick();
    return 'Address added: follow the link in the mail we sent to confirm it.';
  });

  pages.action(`${HOME}/resend`, HOME, async (user, _id, form) => {
    await email.resend(user.id, formText(form, 'address', 64));
    await deps.kick();
    return 'Confirmation sent again.';
  });

  pages.action(`${HOME}/remove`, HOME, async (user, _id, form) => {
    await email.remove(user.id, formText(form, 'address', 64));
    return 'Address removed.';
  });

  const tokenParams = {
    schema: {
      hide: true,
      params: {
        type: 'object',
        properties: { token: { type: 'string', maxLength: 64 } },
        required: ['token'],
        additionalProperties: false,
      },
    },
  } as const;

  app.get<{ Params: { token: string } }>('/email/confirm/:token', tokenParams, async (request, reply) => {
    const { address } = await email.confirm(request.params.token);
    return pages.render(
      reply.header('cache-control', 'no-store'),
      200,
      'Address confirmed',
      html`<h1>Address confirmed</h1>
        <p id="email-confirmed">
          ${address} now receives the mail you ask for. <a href="${HOME}">Your addresses</a>
        </p>`,
    );
  });

  // A GET never unsubscribes (link scanners follow every link): it shows a button that POSTs.
  app.get<{ Params: { token: string } }>('/email/unsubscribe/:token', tokenParams, async (request, reply) => {
    const found = await email.unsubscribeInfo(request.params.token);
    return pages.render(
      reply.header('cache-control', 'no-store'),
      200,
      'Unsubscribe',
      html`<h1>Unsubscribe</h1>
        <form
          method="post"
          action="/email/unsubscribe/${request.params.token}"
          class="card"
          id="email-unsubscribe"
        >
          <p>Stop ${streamName(found.stream)} to ${found.address}?</p>
          <button type="submit">Unsubscribe</button>
        </form>`,
    );
  });

  app.post<{ Params: { token: string } }>(
    '/email/unsubscribe/:token',
    tokenParams,
    async (request, reply) => {
      await email.unsubscribe(request.params.token);
      return pages.render(
        reply.header('cache-control', 'no-store'),
        200,
        'Unsubscribed',
        html`<h1>Unsubscribed</h1>
          <p id="email-unsubscribed">You will get no more of these mails.</p>`,
      );
    },
  );
};
