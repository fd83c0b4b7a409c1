import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { listMyViews } from '../../../application/site/saved-views.ts';
import {
  changeSubscription,
  createSubscription,
  deleteSubscription,
  listDeliveries,
  listSubscriptions,
  type SubscriptionDeps,
  testSubscription,
} from '../../../application/subscriptions/subscriptions.ts';
import type { SavedView } from '../../../domain/site/saved-views.ts';
import type { Subscription } from '../../../domain/subscriptions/subscriptions.ts';
import type { DeliveryLogEntry } from '../../../ports/subscriptions/subscription-store.ts';
import { accountPages, formText, headRow, hidden, type User } from '../account-pages.ts';
import { csrfInput, type Form, verifiedForm } from '../csrf.ts';
import { type Html, html } from '../html.ts';
import { copyButton, pageScript } from '../page-scripts.ts';
import { flashFrom } from '../replies.ts';

// /account/subscriptions (issue 39 §2, §4): the owner's subscriptions with their delivery logs;
// a new one from a saved view or from the Explore page's current view (its "Subscribe to this
// view" link fills the form: ?catalog=&datasets=&bounds=&startDate=&endDate=); the signing secret
// shown once, on the page that answers the creation; a test delivery; enabling a disabled one.
// Everything through the same use cases as /api/subscriptions.

const HOME = '/account/subscriptions';

type PageDeps = {
  subscriptions: SubscriptionDeps;
  csrfSecret: string;
};

const idOf = (reply: FastifyReply) => (reply.request.params as { id: string }).id;
const when = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

const degrees = (value: number) => value.toFixed(2);

/** A date as the form took it: the day; an end at midnight is exclusive, so its day is the one before. */
function day(iso: string, end: boolean): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const midnight = at.getUTCHours() === 0 && at.getUTCMinutes() === 0 && at.getUTCSeconds() === 0;
  return new Date(at.getTime() - (end && midnight ? 86_400_000 : 0)).toISOString().slice(0, 10);
}

function describeFilter(s: Subscription): string {
  const f = s.filter;
  const b = f.bounds;
  const parts = [
    f.catalog ? `catalog ${f.catalog}` : 'all catalogs',
    f.datasets.length ? `datasets ${f.datasets.join(', ')}` : '',
    b
      ? `area ${degrees(b.south)}° to ${degrees(b.north)}° N, ${degrees(b.west)}° to ${degrees(b.east)}° E`
      : '',
    f.dates.from || f.dates.to
      ? `dates ${f.dates.from ? day(f.dates.from, false) : '…'} – ${f.dates.to ? day(f.dates.to, true) : '…'}`
      : '',
  ];
  return parts.filter((p) => p !== '').join('; ');
}

function logTable(entries: DeliveryLogEntry[]): Html {
  if (entries.length === 0) return html`<p class="muted">No delivery yet.</p>`;
  return html`<table class="delivery-log">
    ${headRow('When', 'Delivery', 'Attempt', 'Status', 'Time', 'Error')}
    <tbody>
      ${entries.map(
        (e) =>
          html`<tr>
            <td>${when(e.attemptedAt)}</td>
            <td><code>${e.deliveryId}</code>${e.kind === 'test' ? ' (test)' : ''}</td>
            <td>${e.attempt}</td>
            <td>${e.statusCode === null ? '–' : String(e.statusCode)}</td>
            <td>${e.durationMs} ms</td>
            <td>${e.error ?? ''}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function card(token: string, s: Subscription, log: DeliveryLogEntry[]): Html {
  const action = (path: string, label: string, kind = 'secondary') =>
    html`<form method="post" action="${HOME}/${s.id}/${path}" class="inline">
      ${csrfInput(token)}<button type="submit" class="small ${kind}">${label}</button>
    </form>`;
  return html`<section class="card" id="subscription-${s.id}" data-subscription="${s.id}">
    <div class="actions" style="justify-content:space-between; flex-wrap:wrap">
      <h2 style="margin:0">
        ${s.name}
        <span class="badge ${s.enabled ? 'enabled' : 'disabled'}">${s.enabled ? 'active' : 'disabled'}</span>
      </h2>
      <div class="actions">
        ${s.channel.kind === 'webhook' ? action('test', 'Send a test delivery') : ''}
        ${s.enabled ? '' : action('enable', 'Enable again', 'primary')}
        ${action('delete', 'Delete', 'danger')}
      </div>
    </div>
    <p>
      ${s.channel.kind === 'webhook' ? html`Webhook to <code>${s.channel.url}</code>` : 'E-mail digest'} ·
      ${describeFilter(s)}
    </p>
    ${s.disabledReason ? html`<p class="error">Disabled: ${s.disabledReason}</p>` : ''}
    <h3>Delivery log</h3>
    ${logTable(log)}
  </section>`;
}

function newForm(
  token: string,
  views: SavedView[],
  addresses: { id: string; address: string }[],
  prefill: Record<string, string>,
): Html {
  const from = (name: string) => prefill[name] ?? '';
  return html`<section class="card" id="new-subscription">
    <h2 style="margin-top:0">New subscription</h2>
    <form method="post" action="${HOME}" class="stack">
      ${csrfInput(token)}
      <label for="sub-name">Name</label>
      <input id="sub-name" name="name" type="text" required maxlength="200" value="${from('name')}" />
      <label for="sub-deliver">Deliver by</label>
      <select id="sub-deliver" name="deliver">
        <option value="webhook">Webhook: signed POSTs to the URL below</option>
        ${addresses.map((a) => html`<option value="email:${a.id}">E-mail digest to ${a.address}</option>`)}
      </select>
      ${
        addresses.length === 0
          ? html`<p class="muted">
              For e-mail digests, add and confirm an address on <a href="/account/email">E-mail addresses</a>.
            </p>`
          : ''
      }
      <label for="sub-url">Webhook URL (receives signed POSTs, Standard Webhooks)</label>
      <input
        id="sub-url"
        name="url"
        type="url"
        maxlength="2000"
        placeholder="https://hooks.example.org/chronomap"
      />
      <label for="sub-view">Saved view</label>
      <select id="sub-view" name="view">
        <option value="">The view below (from the Explore page)</option>
        ${views.map((v) => html`<option value="${v.code}">${v.title}</option>`)}
      </select>
      <fieldset>
        <legend>View</legend>
        <label for="sub-catalog">Catalog</label>
        <input id="sub-catalog" type="text" name="catalog" value="${from('catalog')}" />
        <label for="sub-datasets">Datasets (comma-separated)</label>
        <input id="sub-datasets" type="text" name="datasets" value="${from('datasets')}" />
        <label for="sub-bounds">Area (JSON: north, south, east, west)</label>
        <input id="sub-bounds" type="text" name="bounds" value="${from('bounds')}" />
        <label for="sub-start">From (YYYY-MM-DD)</label>
        <input id="sub-start" type="text" name="startDate" value="${from('startDate')}" />
        <label for="sub-end">Until (YYYY-MM-DD, included)</label>
        <input id="sub-end" type="text" name="endDate" value="${from('endDate')}" />
      </fieldset>
      <button type="submit">Subscribe</button>
    </form>
  </section>`;
}

function secretView(s: Subscription, secret: string): Html {
  return html`<section class="card" id="new-secret">
    <h2>Subscription “${s.name}” created</h2>
    <p>
      Its signing secret is shown this once: keep it with your receiver, which verifies each delivery's
      <code>webhook-signature</code> with it.
    </p>
    <input id="webhook-secret" type="text" readonly value="${secret}" size="60" />
    ${copyButton('webhook-secret')}
  </section>`;
}

/** The form's fields as the API's body. */
function bodyOf(form: Form) {
  const text = (name: string) => formText(form, name, 2000);
  const filter: Record<string, unknown> = {};
  if (text('catalog')) filter.catalog = text('catalog');
  if (text('datasets'))
    filter.datasets = text('datasets')
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean);
  if (text('bounds')) {
    try {
      filter.bounds = JSON.parse(text('bounds'));
    } catch {
      filter.bounds = text('bounds');
    }
  }
  if (text('startDate')) filter.startDate = text('startDate');
  if (text('endDate')) filter.endDate = text('endDate');
  const deliver = text('deliver');
  const channel = deliver.startsWith('email:')
    ? { channel: 'email', emailAddressId: deliver.slice('email:'.length) }
    : { channel: 'webhook', url: text('url') };
  return {
    name: text('name'),
    ...channel,
    ...(text('view')
      ? { view: text('view'), filter: filter.bounds ? { bounds: filter.bounds } : undefined }
      : { filter }),
  };
}

export const subscriptionsPage: FastifyPluginAsync<PageDeps> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, HOME);
  const d = deps.subscriptions;

  async function render(
    reply: FastifyReply,
    user: User,
    token: string,
    top: Html,
    prefill: Record<string, string>,
  ) {
    const [list, views, addresses] = await Promise.all([
      listSubscriptions(d, user),
      listMyViews(d, user),
      d.confirmedAddresses(user.id),
    ]);
    const logs = await Promise.all(list.map((s) => listDeliveries(d, user, String(s.id))));
    const body = html`<h1>Subscriptions</h1>
      <p class="muted">
        Changes to the events of a view — created, updated, deleted, back-dated too — delivered to your
        webhook as signed POSTs within seconds, or as e-mail digests to a confirmed address; only those you
        may read.
      </p>
      ${top} ${list.map((s, i) => card(token, s, logs[i] ?? []))} ${newForm(token, views, addresses, prefill)}
      ${pageScript('copy-buttons.js')}`;
    return pages.render(reply, 200, 'Subscriptions', body, {
      user,
      token,
      flash: flashFrom(reply.request),
      scripts: true,
    });
  }

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const query = request.query as Record<string, unknown>;
    const prefill = Object.fromEntries(
      ['name', 'catalog', 'datasets', 'bounds', 'startDate', 'endDate'].flatMap((k) =>
        typeof query[k] === 'string' ? [[k, (query[k] as string).slice(0, 2000)]] : [],
      ),
    );
    return render(reply, user, token, html``, prefill);
  });

  app.post(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const form = verifiedForm(pages.csrf, request);
    const created = await createSubscription(d, user, bodyOf(form));
    const token = pages.csrf.token(request, reply);
    const top = created.secret
      ? secretView(created.subscription, created.secret)
      : html`<section class="card" id="new-secret">
          <h2>Subscription “${created.subscription.name}” created</h2>
          <p>Its digests go to the address you chose; its deliveries appear in its log below.</p>
        </section>`;
    return render(reply, user, token, top, {});
  });

  pages.action(`${HOME}/:id/test`, HOME, async (user, _id, _form, reply) => {
    await testSubscription(d, user, idOf(reply));
    return 'A test delivery was queued: its outcome appears in the delivery log within seconds.';
  });
  pages.action(`${HOME}/:id/enable`, HOME, async (user, _id, _form, reply) => {
    await changeSubscription(d, user, idOf(reply), { enabled: true });
    return 'The subscription is active again; its waiting deliveries are sent.';
  });
  pages.action(`${HOME}/:id/delete`, HOME, async (user, _id, _form, reply) => {
    await deleteSubscription(d, user, idOf(reply));
    return 'The subscription was deleted.';
  });
};
