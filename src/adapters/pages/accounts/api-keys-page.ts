import type { FastifyPluginAsync } from 'fastify';
import {
  type ApiKeyDeps,
  apiKeyCatalogChoices,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../../application/accounts/api-keys.ts';
import type { ApiKey } from '../../../domain/accounts/api-keys.ts';
import { ValidationError } from '../../../domain/errors.ts';
import { accountPages, formText, headRow, hidden } from '../account-pages.ts';
import { csrfInput, type Form } from '../csrf.ts';
import { type Html, html } from '../html.ts';
import { copyButton, pageScript } from '../page-scripts.ts';
import { flashFrom } from '../replies.ts';

// /account/api-keys (issue 38 §3, §6): the caller's API keys, a form to create one (its secret is
// shown once, on the answer to the form, never in an address or a flash), and revocation behind a
// confirmation box. The same use cases as /api/api-keys.

type ApiKeysPageDeps = { apiKeys: ApiKeyDeps; csrfSecret: string };

const HOME = '/account/api-keys';
const when = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'never');

type CatalogChoice = { id: number; title: string };

function keyRows(token: string, keys: ApiKey[], choices: CatalogChoice[]): Html {
  const titleOf = new Map(choices.map((choice) => [choice.id, choice.title]));
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
            <td>
              ${key.catalogIds ? key.catalogIds.map((id) => titleOf.get(id) ?? `#${id}`).join(', ') : 'all'}
            </td>
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
    <p><b>Your new API key.</b> Copy it now: it is shown only this once.</p>
    <p>
      <input id="api-key-secret" type="text" readonly value="${secret}" size="60" />
      ${copyButton('api-key-secret')}
    </p>
    <p class="muted">Send it as <code>Authorization: Bearer ${secret.slice(0, 12)}…</code></p>
  </div>`;
}

function catalogFieldset(choices: CatalogChoice[]): Html {
  if (choices.length === 0)
    return html`<p class="muted">The key covers all your catalogs (you have none yet).</p>`;
  return html`<fieldset>
    <legend>Catalogs (none ticked: all of yours, present and future)</legend>
    ${choices.map(
      (choice) =>
        html`<label class="check"
          ><input type="checkbox" name="catalog-${String(choice.id)}" value="yes" /> ${choice.title}</label
        >`,
    )}
  </fieldset>`;
}

function keysView(token: string, keys: ApiKey[], choices: CatalogChoice[], created: string | null): Html {
  return html`<h1>API keys</h1>
    ${created ? html`${createdView(created)} ${pageScript('copy-buttons.js')}` : ''}
    <p>
      A key lets a script call the API as you, limited to reading (GET) or also writing, and to all your
      catalogs or some. A key cannot manage keys or your account. See docs/api.md, "API keys".
    </p>
    ${keyRows(token, keys, choices)}
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
      ${catalogFieldset(choices)}
      <button type="submit" id="api-key-create-submit">Create key</button>
    </form>`;
}

/** The ticked catalogs (`catalog-<id>` boxes); none ticked: every catalog of the caller's. */
function catalogList(form: Form): number[] | 'all' {
  const ids = Object.keys(form)
    .map((name) => /^catalog-([1-9]\d{0,15})$/.exec(name)?.[1])
    .filter((id): id is string => id !== undefined)
    .map(Number);
  return ids.length === 0 ? 'all' : ids;
}

export const apiKeysPage: FastifyPluginAsync<ApiKeysPageDeps> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, '/account');

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const [keys, choices] = await Promise.all([
      listApiKeys(deps.apiKeys, user),
      apiKeyCatalogChoices(deps.apiKeys, user),
    ]);
    const body = keysView(token, keys, choices, null);
    return pages.render(reply, 200, 'API keys', body, { user, token, flash: flashFrom(request) });
  });

  // The secret is on this answer only: a page of its own, not a redirect with it in the address.
  pages.action(HOME, HOME, async (user, _id, form, reply) => {
    const { secret } = await createApiKey(deps.apiKeys, user, {
      name: formText(form, 'name', 100),
      scope: form.scope ?? '',
      catalogs: catalogList(form),
    });
    const token = pages.csrf.token(reply.request, reply);
    const [keys, choices] = await Promise.all([
      listApiKeys(deps.apiKeys, user),
      apiKeyCatalogChoices(deps.apiKeys, user),
    ]);
    const body = keysView(token, keys, choices, secret);
    pages.render(reply.header('cache-control', 'no-store'), 201, 'API keys', body, {
      user,
      token,
      scripts: true,
    });
    return '';
  });

  pages.action(`${HOME}/:id/revoke`, HOME, async (user, id, form) => {
    if (form.confirm !== 'yes') throw new ValidationError('Tick the box to confirm the revocation');
    await revokeApiKey(deps.apiKeys, user, id);
    return 'API key revoked.';
  });
};
