import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { listCatalogsWithDatasets } from '../../../application/ingest/list-imports.ts';
import {
  deleteScheduledIngest,
  listScheduledIngests,
  scheduledIngestRuns,
} from '../../../application/ingest/manage-scheduled-ingests.ts';
import {
  createScheduledIngest,
  getScheduledIngest,
  triggerScheduledIngest,
  updateScheduledIngest,
} from '../../../application/ingest/scheduled-ingests.ts';
import { ValidationError } from '../../../domain/errors.ts';
import { parseReviewDuplicates, type ReviewDuplicates } from '../../../domain/ingest/review.ts';
import { parseIngestSettings } from '../../../domain/ingest/settings.ts';
import type { ScheduledRunRecord } from '../../../ports/ingest/import-listings.ts';
import type { ScheduledIngest } from '../../../ports/ingest/schedule-store.ts';
import { accountPages, formText, headRow, hidden, type User } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import type { Form } from '../csrf.ts';
import { type Html, html, trusted } from '../html.ts';
import { importOutcomeCell } from '../import-outcome.ts';
import type { MyImportsDeps } from './my-imports.ts';
import { pageScript } from '../page-scripts.ts';
import { flashFrom } from '../replies.ts';
import { webhookUrl } from '../../http/public-url.ts';
import { parseAlertAfter } from '../../../domain/source-health.ts';
import { alertAfterInput, healthBanner, healthLine } from '../source-health.ts';

// /account/scheduled-imports: the caller's scheduled URL imports (admins: all) with their last
// runs and outcome, a form to create one, and edit (name, URL, cron schedule, time column), enable/disable, trigger
// now and delete. The webhook URL of a new (or re-enabled) schedule is shown once, on the page that
// answers the post: it is a credential, so it never travels in a redirect's URL. The create form's
// "Preview the file" button is web/account/scheduled-import-preview.js (hidden without JavaScript).

const HOME = '/account/scheduled-imports';

const STYLE = trusted(`
.badge.imported { background:var(--ok-bg); color:var(--ok); }
.badge.fetching { background:#dceefb; color:#0b4f8a; }
#url-preview.preview { font-size:.9em; color:var(--muted); }
`);
const RUNS_SHOWN = 5;

const when = (iso: string | null) => (iso ? `${iso.replace('T', ' ').slice(0, 16)} UTC` : '—');
const badge = (status: string | null) =>
  status ? html`<span class="badge ${status}">${status}</span>` : html`<span class="muted">never run</span>`;

function runsTable(runs: ScheduledRunRecord[]): Html {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`<table class="runs">
    ${headRow('Due', 'By', 'Fetch', 'Import')}
    <tbody>
      ${runs.map(
        (run) =>
          html`<tr data-run-id="${run.id}">
            <td class="nowrap">${when(run.dueAt)}</td>
            <td>${run.triggeredBy}</td>
            <td>${badge(run.status)} ${run.error ? html`<span class="muted">${run.error}</span>` : ''}</td>
            <td>${importOutcomeCell(run.import)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

const REVIEW_CHOICES: [ReviewDuplicates, string][] = [
  ['first-run', 'on the first run into the dataset only (rows repeated in the file: every run)'],
  ['always', 'on every run'],
  ['never', 'never'],
];

/** The schedule's duplicate review (docs/ingestion.md, "Duplicate review of recurring sources"). */
function reviewDuplicatesSelect(current: ReviewDuplicates): Html {
  return html`<label
    >Stop for review when most rows are duplicates
    <select name="reviewDuplicates">
      ${REVIEW_CHOICES.map(
        ([value, label]) =>
          html`<option value="${value}" ${value === current ? trusted('selected') : ''}>${label}</option>`,
      )}
    </select></label
  >`;
}

function scheduleCard(token: string, schedule: ScheduledIngest, runs: ScheduledRunRecord[]): Html {
  const action = (path: string, label: string, kind = 'secondary') =>
    html`<form method="post" action="${HOME}/${schedule.id}/${path}" class="inline">
      ${csrfInput(token)}<button type="submit" class="small ${kind}">${label}</button>
    </form>`;
  return html`<section class="card schedule" id="schedule-${schedule.id}" data-schedule-id="${schedule.id}">
    <div class="actions" style="justify-content:space-between; flex-wrap:wrap">
      <h2 style="margin:0">
        ${schedule.name}
        <span class="badge ${schedule.enabled ? 'on' : 'off'}"
          >${schedule.enabled ? 'enabled' : 'disabled'}</span
        >
      </h2>
      <div class="actions" style="flex-wrap:wrap">
        ${action('trigger', 'Run now', '')}
        ${schedule.enabled ? action('disable', 'Disable') : action('enable', 'Enable')}
        ${action('delete', 'Delete', 'danger')}
      </div>
    </div>
    <p>
      <code>${schedule.url}</code><br />
      Schedule
      ${schedule.schedule ? html`<code>${schedule.schedule}</code>` : html`<span class="muted">manual and webhook only</span>`}
      · next run ${when(schedule.nextRunAt)} · last run ${when(schedule.lastRunAt)}
      ${badge(schedule.lastStatus)} ${healthLine(schedule.health)}
    </p>
    ${schedule.lastError ? html`<pre class="error">${schedule.lastError}</pre>` : ''}
    <details>
      <summary>Edit</summary>
      <form method="post" action="${HOME}/${schedule.id}/edit" class="stack">
        ${csrfInput(token)}
        <label
          >Name <input type="text" name="name" value="${schedule.name}" maxlength="255" required
        /></label>
        <label
          >URL of the file <input type="text" name="url" value="${schedule.url}" maxlength="2048" required
        /></label>
        <label
          >Cron schedule (UTC, five fields; empty: manual and webhook only)
          <input type="text" name="schedule" value="${schedule.schedule ?? ''}" maxlength="120"
        /></label>
        <label
          >Time column (optional; detected otherwise)
          <input
            type="text"
            name="mapping.timestamp"
            value="${schedule.settings.fieldMapping.timestamp ?? ''}"
            maxlength="255"
        /></label>
        ${reviewDuplicatesSelect(schedule.reviewDuplicates)} ${alertAfterInput(schedule.health)}
        <div><button type="submit" class="small">Save</button></div>
      </form>
    </details>
    <h3>Last runs</h3>
    ${runsTable(runs)}
  </section>`;
}

function createForm(
  token: string,
  catalogs: { id: number; title: string; datasets: { id: number; title: string }[] }[],
): Html {
  return html`<details class="card" ${catalogs.length ? '' : trusted('open')}>
    <summary>New scheduled import</summary>
    <form method="post" action="${HOME}" class="stack" data-schedule-create>
      ${csrfInput(token)}
      <label>Name <input type="text" name="name" maxlength="255" required /></label>
      <label
        >URL of the file
        <input type="text" name="url" maxlength="2048" placeholder="https://…/data.csv" required
      /></label>
      <label
        >Cron schedule (UTC; empty: manual and webhook only)
        <input type="text" name="schedule" maxlength="120" placeholder="0 6 * * *"
      /></label>
      <label
        >Into
        <select name="target">
          ${catalogs.map(
            (catalog) =>
              html`<option value="${catalog.id}:new">${catalog.title}: a new dataset</option>
                ${catalog.datasets.map(
                  (dataset) =>
                    html`<option value="${catalog.id}:${dataset.id}">
                      ${catalog.title}: ${dataset.title}
                    </option>`,
                )}`,
          )}
        </select></label
      >
      <p><button type="button" id="preview-url" class="secondary small" hidden>Preview the file</button></p>
      <p id="url-preview" role="status" hidden></p>
      <label
        >Time column (optional; detected otherwise)
        <input type="text" name="mapping.timestamp" list="url-columns" maxlength="255"
      /></label>
      <datalist id="url-columns"></datalist>
      ${reviewDuplicatesSelect('first-run')}
      <div><button type="submit">Create</button></div>
      ${catalogs.length ? '' : html`<p class="muted">You have no catalog yet: <a href="/account/imports/new">import a file</a> first.</p>`}
    </form>
  </details>`;
}

function webhookShownOnce(schedule: ScheduledIngest, url: string): Html {
  return html`<div class="card" role="status">
    <h2>Webhook for ${schedule.name}</h2>
    <p>POST to this URL to start a run. It is shown <b>only this once</b>: copy it now.</p>
    <p><code data-field="webhook-url">${url}</code></p>
    <p><a href="${HOME}">Back to scheduled imports</a></p>
  </div>`;
}

const number = (value: string | undefined, field: string): number => {
  if (!/^[1-9]\d{0,15}$/.test(value ?? '')) throw new ValidationError(`${field} must be chosen`, { field });
  return Number(value);
};

function newScheduleFrom(form: Form) {
  const [catalog, dataset] = formText(form, 'target', 40).split(':');
  const timestamp = formText(form, 'mapping.timestamp', 255);
  const cron = formText(form, 'schedule', 120);
  const name = formText(form, 'name', 255);
  if (!name) throw new ValidationError('give the schedule a name', { field: 'name' });
  return {
    name,
    url: formText(form, 'url', 2048),
    schedule: cron === '' ? null : cron,
    enabled: true,
    catalogId: number(catalog, 'catalog'),
    datasetId: dataset === 'new' ? null : number(dataset, 'dataset'),
    settings: parseIngestSettings(timestamp ? { fieldMapping: { timestamp } } : undefined, undefined),
    reviewDuplicates: parseReviewDuplicates(formText(form, 'reviewDuplicates', 20) || undefined),
  };
}

export const scheduledImportsPage: FastifyPluginAsync<MyImportsDeps> = async (app, deps) => {
  const schedules = { ...deps.ingest.schedules, listings: deps.listings };
  const pages = accountPages(app, deps.csrfSecret, HOME);

  const listPage = async (user: User, token: string) => {
    const listed = await listScheduledIngests(schedules, user, { limit: 100 });
    const cards = [];
    for (const schedule of listed.schedules) {
      const { runs } = await scheduledIngestRuns(schedules, user, schedule.id, RUNS_SHOWN);
      cards.push(scheduleCard(token, schedule, runs));
    }
    const { catalogs } = await listCatalogsWithDatasets(schedules, user);
    return html`<style>
        ${STYLE}
      </style>
      <h1>Scheduled imports</h1>
      ${healthBanner(listed.schedules)}
      <p class="muted">
        Files on the web fetched on a schedule, by hand or by a webhook, and imported like an upload.
      </p>
      ${createForm(token, catalogs)}
      ${cards.length ? cards : html`<div class="card"><p>No scheduled imports yet.</p></div>`}
      ${pageScript('scheduled-import-preview.js')}`;
  };

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    return pages.render(reply, 200, 'Scheduled imports', await listPage(user, token), {
      user,
      token,
      flash: flashFrom(request),
      scripts: true,
    });
  });

  /** The page with the webhook URL, answered to the post that issued it (never redirected). */
  const showWebhook = async (reply: FastifyReply, user: User, schedule: ScheduledIngest, webhook: string) => {
    const token = pages.csrf.token(reply.request, reply);
    const body = html`${webhookShownOnce(schedule, webhookUrl(reply.request, webhook))}
    ${await listPage(user, token)}`;
    return pages.render(reply, 200, 'Scheduled imports', body, { user, token, scripts: true });
  };

  pages.action(HOME, HOME, async (user, _id, form, reply) => {
    const { schedule, webhookToken } = await createScheduledIngest(schedules, user, newScheduleFrom(form));
    if (webhookToken) await showWebhook(reply, user, schedule, webhookToken);
    return `Created ${schedule.name}.`;
  });

  pages.action(`${HOME}/:id/edit`, HOME, async (user, id, form) => {
    const cron = formText(form, 'schedule', 120);
    const name = formText(form, 'name', 255);
    const url = formText(form, 'url', 2048);
    const timestamp = formText(form, 'mapping.timestamp', 255);
    const reviewDuplicates = formText(form, 'reviewDuplicates', 20);
    const alertAfter = formText(form, 'alertAfter', 3);
    // The form edits the time column only: the other settings (set through the API) are kept.
    const current = await getScheduledIngest(schedules, user, id);
    const { timestamp: _old, ...otherColumns } = current.settings.fieldMapping;
    const mapping = parseIngestSettings(
      { fieldMapping: { ...otherColumns, ...(timestamp ? { timestamp } : {}) } },
      undefined,
    ).fieldMapping;
    const { schedule } = await updateScheduledIngest(schedules, user, id, {
      ...(name ? { name } : {}),
      ...(url ? { url } : {}),
      schedule: cron === '' ? null : cron,
      settings: { ...current.settings, fieldMapping: mapping },
      ...(reviewDuplicates ? { reviewDuplicates: parseReviewDuplicates(reviewDuplicates) } : {}),
      ...(alertAfter ? { alertAfter: parseAlertAfter(alertAfter) } : {}),
    });
    return `Saved ${schedule.name}.`;
  });

  pages.action(`${HOME}/:id/enable`, HOME, async (user, id, _form, reply) => {
    const { schedule, webhookToken } = await updateScheduledIngest(schedules, user, id, { enabled: true });
    if (webhookToken) await showWebhook(reply, user, schedule, webhookToken);
    return `Enabled ${schedule.name}.`;
  });

  pages.action(`${HOME}/:id/disable`, HOME, async (user, id) => {
    const { schedule } = await updateScheduledIngest(schedules, user, id, { enabled: false });
    return `Disabled ${schedule.name}; its webhook no longer works.`;
  });

  pages.action(`${HOME}/:id/trigger`, HOME, async (user, id) => {
    const run = await triggerScheduledIngest(schedules, user, id);
    return `Run ${run.id} queued.`;
  });

  pages.action(`${HOME}/:id/delete`, HOME, async (user, id) => {
    const schedule = await deleteScheduledIngest(schedules, user, id);
    return `Deleted ${schedule.name}.`;
  });
};
