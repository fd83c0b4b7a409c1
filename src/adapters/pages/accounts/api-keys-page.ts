import type { FastifyPluginAsync } from 'fastify';
import {
  type ApiKeyDeps,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../../application/accounts/api-keys.ts';
import type { ApiKey } from '../../../domain/accounts/api-keys.ts';
import { ValidationError } from '../../../domain/errors.ts';
import { accountPages, formText, headRow, hidden } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { type Html, html } from '../html.ts';
import { flashFrom } from '../replies.ts';

// /account/api-keys (issue 38 §3, §6): the caller's API keys, a form to create one (its secret is
// shown once, on the answer to the form, never in an address or a flash), and revocation behind a
// confirmation box. The same use cases as /api/api-keys.

type ApiKeysPageDeps = { apiKeys: ApiKeyDeps; csrfSecret: string };

const HOME = '/account/api-keys';
const when = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'never');

function keyRows(token: string, keys: ApiKey[]): Html {
  if (keys.length === 0) return html`<p class="muted" id="api-keys-none">No API keys yet.</p>`;
  return html`<table id="api-keys">
    ${headRow('Name', 'Prefix', 'Scope', 'Catalogs', 'Created', 'Last used', '')}
    <tbody>
      ${keys.map(
        (key) =>
          html`<tr data-api-key="${String(key.id)}">
            <td>${key.name}</td>
            <td><code>${key.prefix}…</code></td>
            <td>${key.scope}</td>
            <td>${key.catalogIds ? key.catalogIds.join(', ') : 'all'}</td>
            <td>${when(key.createdAt)}</td>
            <td>${when(key.lastUsedAt)}</td>
            <td>
              <form method="post" action="${HOME}/${String(key.id)}/revoke" class="inline">
                ${csrfInput(token)}
                <label><input type="checkbox" name="confirm" value="yes" required /> sure</label>
                <button type="submit" class="danger">Revoke</button>
              </form>
            </td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function createdView(secret: string): Html {
  return html`<div class="card" id="api-key-created">
    <p><b>Your new API key.</b> Copy it now (select the field): it is shown only this once.</p>
    <p>
      <input id="api-key-secret" type="text" readonly value="${secret}" size="60" />
    </p>
    <p class="muted">Send it as <code>Authorization: Bearer ${secret.slice(0, 12)}…</code></p>
  </div>`;
}

function keysView(token: string, keys: ApiKey[], created: string | null): Html {
  return html`<h1>API keys</h1>
    ${created ? createdView(created) : ''}
    <p>
      A key lets a script call the API as you, limited to reading (GET) or also writing, and to all your
      catalogs or some. A key cannot manage keys or your account. See docs/api-v1.md.
    </p>
    ${keyRows(token, keys)}
    <h2>Create a key</h2>
    <form method="post" action="${HOME}" class="card" id="api-key-create">
      ${csrfInput(token)}
      <p>
        <label>Name <input name="name" required maxlength="100" /></label>
      </p>
      <p>
        <label
          >Scope
          <select name="scope">
            <option value="read" selected>read only (GET)</option>
            <option value="write">read and write</option>
          </select></label
        >
      </p>
      <p>
        <label
          >Catalogs (ids, comma-separated; empty for all of yours)
          <input name="catalogs" placeholder="all" maxlength="800"
        /></label>
      </p>
      <button type="submit" id="api-key-create-submit">Create key</button>
    </form>`;
}

function catalogList(raw: string): number[] | 'all' {
  if (raw === '' || raw === 'all') return 'all';
  const ids = raw.split(/[\s,]+/).filter(Boolean);
  if (!ids.every((id) => /^[1-9]\d{0,15}$/.test(id)))
    throw new ValidationError('catalogs must be catalog ids separated by commas', { field: 'catalogs' });
  return ids.map(Number);
}

export const apiKeysPage: FastifyPluginAsync<ApiKeysPageDeps> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, '/account');

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const body = keysView(token, await listApiKeys(deps.apiKeys, user), null);
    return pages.render(reply, 200, 'API keys', body, { user, token, flash: flashFrom(request) });
  });

  // The secret is on this answer only: a page of its own, not a redirect with it in the address.
  pages.action(HOME, HOME, async (user, _id, form, reply) => {
    const { secret } = await createApiKey(deps.apiKeys, user, {
      name: formText(form, 'name', 100),
      scope: form.scope ?? '',
      catalogs: catalogList(formText(form, 'catalogs', 800)),
    });
    const token = pages.csrf.token(reply.request, reply);
    const body = keysView(token, await listApiKeys(deps.apiKeys, user), secret);
    pages.render(reply.header('cache-control', 'no-store'), 201, 'API keys', body, { user, token });
    return '';
  });

  pages.action(`${HOME}/:id/revoke`, HOME, async (user, id, form) => {
    if (form.confirm !== 'yes') throw new ValidationError('Tick the box to confirm the revocation');
    await revokeApiKey(deps.apiKeys, user, id);
    return 'API key revoked.';
  });
};
