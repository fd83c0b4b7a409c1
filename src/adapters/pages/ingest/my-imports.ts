import type { FastifyPluginAsync } from 'fastify';
import { type IngestFileProgress } from '../../../application/ingest/list-ingest-progress.ts';
import { ingestProgressOf } from '../../../application/ingest/get-ingest-progress.ts';
import { jobSchemaDrift } from '../../../application/ingest/job-schema-drift.ts';
import { listIngestFiles } from '../../../application/ingest/list-imports.ts';
import { recommendIngestRecoveries } from '../../../application/ingest/recommend-ingest-recoveries.ts';
import { requeueFailedJob } from '../../../application/ingest/requeue-failed-job.ts';
import { resetIngestJob } from '../../../application/ingest/reset-ingest-job.ts';
import { retryIngestJob } from '../../../application/ingest/retry-ingest-job.ts';
import { reviseIngestJob } from '../../../application/ingest/revise-ingest-job.ts';
import { DomainError } from '../../../domain/errors.ts';
import type { SchemaDrift } from '../../../domain/ingest/schema.ts';
import { parseIngestSettings } from '../../../domain/ingest/settings.ts';
import { RESETTABLE_STAGES, STAGE_DISPLAY_NAMES } from '../../../domain/ingest/stages.ts';
import type { ImportListings } from '../../../ports/ingest/import-listings.ts';
import type { IngestJob } from '../../../domain/ingest/imports.ts';
import type { IngestHttpDeps } from '../../http/ingest/ingest-file-routes.ts';
import { accountPages, formText, hidden, type User } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { csrfProtection, type Form } from '../csrf.ts';
import { datasetDataLinks } from '../data-links.ts';
import { type Html, html, trusted } from '../html.ts';
import { geocodingSummary } from './geocoding-outcome-page.ts';
import { fileSection, progressScript, PROGRESS_STYLE } from './ingest-progress.ts';
import { flashFrom } from '../replies.ts';

// /account/imports ("My imports"): the caller's imports (admins: everyone's) with their live
// progress (the progress page's bars and polling script), what went wrong in words, and the actions
// the recovery recommendations suggest: approve a schema change (with the drift shown), retry,
// reset to a stage, re-configure. The actions are form posts to the same use cases as the API's
// ingest-jobs routes. The admin's manual re-queue of a FAILED job is posted from /dashboard/ingest.

export type MyImportsDeps = { ingest: IngestHttpDeps; listings: ImportListings; csrfSecret: string };

const HOME = '/account/imports';
const FILES_SHOWN = 20;
const MAPPING_KEYS = ['timestamp', 'latitude', 'longitude', 'coordinates', 'address', 'title', 'id'] as const;

const STYLE = trusted(`
.job-actions { border-top:1px dashed var(--line); margin-top:.75rem; padding-top:.75rem; display:grid; gap:.6rem; }
.job-actions .what { color:var(--err); }
.drift td:first-child { font-weight:600; width:8rem; }
.mapping-grid { display:grid; grid-template-columns:repeat(auto-fit, minmax(150px, 1fr)); gap:.6rem; }
`);

/** The recommendations endpoint's actions in words. */
const ADVICE: Record<string, string> = {
  automatic_retry: 'This failure is temporary: it is retried automatically, or retry it now.',
  wait_for_quota_reset:
    'Your account may store no more events (its totalEvents quota). The events before the limit are stored. ' +
    'An administrator can raise your trust level (Dashboard, Users); then Retry continues this import with the rest.',
  manual_intervention:
    'This needs a change before it can work: re-configure the mapping or settings below, or fix the file and upload it again.',
  approve_schema_changes:
    "The file's columns differ from the dataset's schema: look at the change below and approve it, or re-configure.",
  max_retries_exceeded: 'It failed after every automatic retry: retry it once the cause is fixed.',
};

/** Advice by failure code, where the failure's class alone would advise the wrong thing. */
const ADVICE_BY_CODE: Record<string, string> = {
  EVENTS_PER_IMPORT_EXCEEDED:
    'The file has more rows than one import may store at your trust level (eventsPerImport); the events before ' +
    'the limit are stored. Split the file into smaller ones, or ask an administrator to raise your trust level ' +
    '(Dashboard, Users): then Retry continues this import with the rest, no new upload needed.',
};

type Recommendation = {
  recommendedAction: string;
  errorClassification: { reason: string; retryable: boolean };
};

/** What to do, in words: by the failure's code where that says more, else by the recommended action. */
function advice(recommendation: Recommendation, code: string | undefined): string {
  return (
    (code ? ADVICE_BY_CODE[code] : undefined) ??
    ADVICE[recommendation.recommendedAction] ??
    recommendation.errorClassification.reason
  );
}

function driftView(drift: SchemaDrift): Html {
  const row = (label: string, items: string[]) =>
    html`<tr>
      <td>${label}</td>
      <td>${items.length ? items.join(', ') : html`<span class="muted">none</span>`}</td>
    </tr>`;
  return html`<table class="drift" aria-label="Schema change">
    ${row('Added', drift.added)} ${row('Removed', drift.removed)}
    ${row(
      'Retyped',
      drift.changed.map((c) => `${c.name} (${c.from} → ${c.to})`),
    )}
  </table>`;
}

function reconfigureForm(token: string, job: IngestJob): Html {
  const mapping = job.config.fieldMapping as Record<string, string | undefined>;
  const select = (name: string, options: string[], current: string) =>
    html`<select name="${name}" class="small">
      ${options.map((o) => html`<option value="${o}" ${o === current ? trusted('selected') : ''}>${o}</option>`)}
    </select>`;
  return html`<details>
    <summary>Re-configure</summary>
    <form method="post" action="${HOME}/jobs/${job.id}/configure" class="stack" style="max-width:none">
      ${csrfInput(token)}
      <div class="mapping-grid">
        ${MAPPING_KEYS.map(
          (key) =>
            html`<label
              >${key} column <input type="text" name="mapping.${key}" value="${mapping[key] ?? ''}"
            /></label>`,
        )}
      </div>
      <div class="row">
        <label
          >Schema mode
          ${select('schemaMode', ['strict', 'additive', 'flexible'], job.config.schemaMode)}</label
        >
        <label
          >Duplicates ${select('duplicateHandling', ['skip', 'update'], job.config.duplicateHandling)}</label
        >
        <label
          >Ids ${select('idStrategy', ['auto', 'external-id', 'content-hash'], job.config.idStrategy)}</label
        >
        <label class="check"
          ><input type="checkbox" name="geocoding" ${job.config.geocoding ? trusted('checked') : ''} />
          Geocode addresses</label
        >
      </div>
      <div><button type="submit" class="small">Save and restart</button></div>
    </form>
  </details>`;
}

function jobActions(
  token: string,
  job: IngestJob,
  recommendation: Recommendation | undefined,
  drift: SchemaDrift | null,
): Html | '' {
  const failed = job.stage === 'failed';
  const review = job.stage === 'needs-review';
  const log = job.errorLog;
  if (!failed && !review && !log?.rowErrors?.length) return '';
  return html`<div class="job-actions" data-job-actions="${job.id}">
    ${
      log && failed
        ? html`<p class="what">
            <b>What went wrong:</b> ${log.lastError}${log.code ? html` <code>${log.code}</code>` : ''}
          </p>`
        : ''
    }
    ${review ? html`<p><b>Waiting for review:</b> ${(job.reviewReasons ?? []).join('; ') || 'asked for review'}</p>` : ''}
    ${
      log?.rowErrors?.length
        ? html`<details>
            <summary>Rows skipped (${log.rowErrors.length} listed)</summary>
            <ul>
              ${log.rowErrors.slice(0, 20).map((e) => html`<li>row ${e.row}: ${e.field} ${e.message}</li>`)}
            </ul>
          </details>`
        : ''
    }
    ${recommendation ? html`<p class="advice"><b>What to do:</b> ${advice(recommendation, log?.code)}</p>` : ''}
    ${drift ? driftView(drift) : ''}
    <div class="actions" style="flex-wrap:wrap">
      ${
        drift && (review || log?.code === 'SCHEMA_DRIFT')
          ? html`<form method="post" action="${HOME}/jobs/${job.id}/approve" class="inline">
              ${csrfInput(token)}<button type="submit" class="small">Approve schema changes</button>
            </form>`
          : review
            ? html`<form method="post" action="${HOME}/jobs/${job.id}/approve" class="inline">
                ${csrfInput(token)}<button type="submit" class="small">Import anyway</button>
              </form>`
            : ''
      }
      ${
        // Offered only when the retry would be taken (retryRefusal, through the recommendation): a
        // schema change is approved and a bad mapping re-configured, not retried.
        failed && recommendation?.errorClassification.retryable
          ? html`<form method="post" action="${HOME}/jobs/${job.id}/retry" class="inline">
              ${csrfInput(token)}<button type="submit" class="small secondary">Retry</button>
            </form>`
          : ''
      }
      ${
        failed || review
          ? html`<form method="post" action="${HOME}/jobs/${job.id}/reset" class="inline">
              ${csrfInput(token)}
              <label class="check"
                >Reset to
                <select name="stage" class="small">
                  ${RESETTABLE_STAGES.map((s) => html`<option value="${s}">${STAGE_DISPLAY_NAMES[s]}</option>`)}
                </select></label
              >
              <button type="submit" class="small secondary">Reset</button>
            </form>`
          : ''
      }
    </div>
    ${failed || review ? reconfigureForm(token, job) : ''}
  </div>`;
}

function myImportsView(
  token: string,
  user: User,
  files: { progress: IngestFileProgress; jobs: IngestJob[]; uploadedBy: number | null }[],
  recommendations: Map<number, Recommendation>,
  drifts: Map<number, SchemaDrift | null>,
  now: number,
): Html {
  return html`<style>
      ${PROGRESS_STYLE} ${STYLE}
    </style>
    <div class="actions" style="justify-content:space-between">
      <h1>${user.role === 'admin' ? 'All imports' : 'My imports'}</h1>
      <a href="${HOME}/new">Import a file</a>
    </div>
    ${
      files.length === 0
        ? html`<div class="card">
            <p>No imports yet. <a href="${HOME}/new">Import a file</a> to see your events on the map.</p>
          </div>`
        : files.map(
            ({ progress, jobs, uploadedBy }) =>
              html`${
                user.role === 'admin' && uploadedBy !== user.id
                  ? html`<p class="muted">Uploaded by user ${uploadedBy ?? '(scheduled)'}</p>`
                  : ''
              }
              ${fileSection(progress, now, (jobId) => {
                const job = jobs.find((j) => j.id === jobId);
                const geocoding = progress.jobs.find((j) => j.id === jobId);
                if (!job) return geocoding ? geocodingSummary(geocoding) : '';
                // A completed import's data: where to see it and download it (issue 28 §6).
                const links =
                  job.stage === 'completed' && job.datasetSlug ? datasetDataLinks(job.datasetSlug) : '';
                // Its privacy and provenance (issue 38 §6); the page itself decides who may write.
                const settings =
                  job.stage === 'completed' && job.datasetId
                    ? html`<p>
                        <a href="/account/datasets/${String(job.datasetId)}/settings" data-settings-link
                          >Privacy and provenance settings</a
                        >
                      </p>`
                    : '';
                return html`${links}${settings}${geocoding ? geocodingSummary(geocoding) : ''}${jobActions(
                  token,
                  job,
                  recommendations.get(jobId),
                  drifts.get(jobId) ?? null,
                )}`;
              })}`,
          )
    }
    <div data-reload-when-settled hidden></div>
    ${progressScript()}`;
}

/** A re-configuration from the form, checked as the upload's settings are. */
function configFromForm(form: Form) {
  const fieldMapping: Record<string, string> = {};
  for (const key of MAPPING_KEYS) {
    const value = formText(form, `mapping.${key}`, 255);
    if (value) fieldMapping[key] = value;
  }
  const settings = parseIngestSettings(
    {
      fieldMapping,
      schemaMode: form.schemaMode,
      duplicateHandling: form.duplicateHandling,
      idStrategy: form.idStrategy,
      geocoding: form.geocoding === 'on',
    },
    undefined,
  );
  return {
    fieldMapping: settings.fieldMapping,
    schemaMode: settings.schemaMode,
    duplicateHandling: settings.duplicateHandling,
    idStrategy: settings.idStrategy,
    geocoding: settings.geocoding,
  };
}

export const myImportsPages: FastifyPluginAsync<MyImportsDeps> = async (app, deps) => {
  const { ingest, listings } = deps;
  const pages = accountPages(app, deps.csrfSecret, HOME);

  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    const listed = await listIngestFiles({ listings }, user, { limit: FILES_SHOWN, sort: '-createdAt' });
    const { recommendations } = await recommendIngestRecoveries(ingest, user);
    const byJob = new Map(recommendations.map((r) => [r.importJobId, r]));
    const drifts = new Map<number, SchemaDrift | null>();
    const files = [];
    for (const { file, jobs } of listed.files) {
      for (const job of jobs) {
        if (job.stage === 'needs-review' || job.errorLog?.code === 'SCHEMA_DRIFT')
          drifts.set(job.id, await jobSchemaDrift(ingest, user, job.id));
      }
      const progress = (await ingestProgressOf(ingest, file, 'ingest')) as IngestFileProgress;
      files.push({ progress, jobs, uploadedBy: file.uploadedBy });
    }
    const body = myImportsView(token, user, files, byJob, drifts, ingest.clock.now().getTime());
    return pages.render(reply, 200, 'My imports', body, {
      user,
      token,
      flash: flashFrom(request),
      scripts: true,
    });
  });

  pages.action(`${HOME}/jobs/:id/approve`, HOME, async (user, id) => {
    const { restartedAt } = await reviseIngestJob(ingest, user, id, { approved: true });
    return `Approved: job ${id} continues${restartedAt ? ` at ${STAGE_DISPLAY_NAMES[restartedAt]}` : ''}.`;
  });

  pages.action(`${HOME}/jobs/:id/retry`, HOME, async (user, id) => {
    const result = await retryIngestJob(ingest, user, id);
    if (!result.success) throw new DomainError('validation', `Not retried: ${result.error}`);
    return `Retry scheduled: ${result.message}.`;
  });

  pages.action(`${HOME}/jobs/:id/reset`, HOME, async (user, id, form) => {
    const result = await resetIngestJob(ingest, user, id, formText(form, 'stage', 40));
    return `Reset: ${result.message}.`;
  });

  pages.action(`${HOME}/jobs/:id/configure`, HOME, async (user, id, form) => {
    const { restartedAt } = await reviseIngestJob(ingest, user, id, { config: configFromForm(form) });
    return `Settings saved: job ${id} restarts${restartedAt ? ` at ${STAGE_DISPLAY_NAMES[restartedAt]}` : ''}.`;
  });

  // The admin's manual re-queue, posted from /dashboard/ingest with the dashboard's CSRF token.
  pages.action(
    '/dashboard/ingest/jobs/:id/requeue',
    '/dashboard/ingest',
    async (user, id) => `Re-queued: ${(await requeueFailedJob(ingest, user, id)).message}.`,
    csrfProtection(deps.csrfSecret, '/dashboard'),
  );
};
