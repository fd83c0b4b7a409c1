import type { FastifyPluginAsync } from 'fastify';
import {
  type DataExportDeps,
  latestDataExport,
  requestDataExport,
} from '../../../application/accounts/export-own-data.ts';
import { EXPORT_FILES } from '../../../domain/accounts/data-export.ts';
import type { DataExport } from '../../../ports/accounts/data-export-store.ts';
import { accountPages, hidden, type User } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { accountExportDownloadUrl } from '../data-links.ts';
import { type Html, html } from '../html.ts';
import { flashFrom } from '../replies.ts';
import type { Quotas, QuotaStatus } from '../../../ports/accounts/quotas.ts';

// /account: who is logged in, with which standing, and the download of everything the account
// holds (issue 28 §6): a form asks for the own-data export (the same use case as
// POST /api/data-exports/request, with its one-at-a-time and daily limits) and the latest export
// is shown with its state, and its download link once the ZIP is ready.

type AccountPageDeps = { exports: DataExportDeps; quotas: Pick<Quotas, 'status'>; csrfSecret: string };

const HOME = '/account';

const size = (bytes: number | null) =>
  bytes === null
    ? ''
    : bytes < 1024 * 1024
      ? `${Math.ceil(bytes / 1024)} kB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function latestView(latest: DataExport | null, now: number): Html | '' {
  if (!latest) return '';
  const requested = latest.createdAt.slice(0, 16).replace('T', ' ');
  if (latest.status === 'queued' || latest.status === 'running')
    return html`<p data-export-status="${latest.status}">
      Your export of ${requested} UTC is being prepared: reload this page in a moment for the download.
    </p>`;
  if (latest.status === 'failed')
    return html`<p data-export-status="failed" class="error">
      Your export of ${requested} UTC failed (${latest.error ?? 'no reason recorded'}): request a new one.
    </p>`;
  const expired = !latest.storedPath || Date.parse(latest.expiresAt ?? '') <= now;
  if (expired)
    return html`<p data-export-status="expired" class="muted">
      Your export of ${requested} UTC has expired (exports are kept for 24 hours): request a new one.
    </p>`;
  return html`<p data-export-status="ready">
    <a id="account-export-download" href="${accountExportDownloadUrl(latest.id)}" download
      >Download your data (ZIP, ${size(latest.sizeBytes)})</a
    >
    <span class="muted"
      >· prepared ${requested} UTC, kept until ${(latest.expiresAt ?? '').slice(0, 16).replace('T', ' ')}
      UTC</span
    >
  </p>`;
}

/** The caller's quotas as GET /api/quotas shows them: every counted one with its usage, then the ceilings. */
function quotasView(statuses: QuotaStatus[]): Html {
  const limit = (s: QuotaStatus) => (s.limit === null ? 'unlimited' : s.limit.toLocaleString('en'));
  return html`<h2>Your quotas</h2>
    <table id="account-quotas">
      <thead>
        <tr>
          <th>Quota</th>
          <th>Used</th>
          <th>Limit</th>
        </tr>
      </thead>
      <tbody>
        ${statuses.map(
          (s) =>
            html`<tr data-quota="${s.quota}">
              <td>${s.description}${s.resetTime ? ' (today, UTC)' : ''}</td>
              <td>
                ${s.quota === 'eventsPerImport' || s.quota === 'maxFileSizeMB' ? '' : s.used.toLocaleString('en')}
              </td>
              <td>${limit(s)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function accountView(
  token: string,
  user: User,
  latest: DataExport | null,
  now: number,
  statuses: QuotaStatus[],
): Html {
  return html`<h1>Your account</h1>
    <div class="card">
      <p><b>${user.email}</b></p>
      <p class="muted">Role ${user.role} · trust level ${user.trustLevel}</p>
      <p><a href="/account/api-keys" id="account-api-keys">API keys</a> for scripts and programs</p>
      <p><a href="/account/email" id="account-email">E-mail addresses</a> for alerts and digests</p>
    </div>
    ${quotasView(statuses)}
    <h2>Your data</h2>
    <div class="card" id="account-data">
      <p>
        Everything this account holds, as one ZIP: ${EXPORT_FILES.join(', ')}. It is prepared in the
        background and can be downloaded for 24 hours.
      </p>
      ${latestView(latest, now)}
      <form method="post" action="${HOME}/data-export" class="inline">
        ${csrfInput(token)}
        <button type="submit" id="account-export-request">Prepare an export of all my data</button>
      </form>
    </div>`;
}

export const accountPage: FastifyPluginAsync<AccountPageDeps> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, HOME);

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const latest = await latestDataExport(deps.exports, user);
    const statuses = await deps.quotas.status(user.id);
    const body = accountView(token, user, latest, deps.exports.clock.now().getTime(), statuses);
    return pages.render(reply, 200, 'Your account', body, { user, token, flash: flashFrom(request) });
  });

  pages.action(`${HOME}/data-export`, HOME, async (user) => {
    await requestDataExport(deps.exports, user);
    // The state below says how far it is; a notice that it is "being prepared" would stay in the
    // address (and on every reload) after it is ready.
    return 'Export requested.';
  });
};
