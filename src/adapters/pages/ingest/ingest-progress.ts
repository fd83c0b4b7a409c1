import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import {
  type IngestFileProgress,
  listIngestProgress,
} from '../../../application/ingest/list-ingest-progress.ts';
import type { Clock } from '../../../ports/clock.ts';
import type { IngestStore } from '../../../ports/ingest/ingest-store.ts';
import { failedJobsToRequeue } from '../../../application/ingest/requeue-failed-job.ts';
import type { FailedJobSummary } from '../../../domain/ingest/imports.ts';
import { csrfInput, csrfProtection } from '../csrf.ts';
import { flashFrom, htmlReply } from '../replies.ts';
import { type Html, html, jsonData, trusted } from '../html.ts';
import { pageScript } from '../page-scripts.ts';
import { page } from '../layout.ts';
import { messageView } from '../layout.ts';
import { viewerOf } from '../../http/viewer.ts';

// The admin's ingest progress page (/dashboard/ingest): the caller's recent ingest files, each with
// a progress bar, the state of every stage, rows/s and the estimated completion, rendered from the
// same use case as GET /api/ingest/{ingestId}/progress. While a file is still running, a small
// script (web/account/ingest-progress.js) polls that endpoint and updates the page in place; without
// JavaScript a reload shows the same figures.

type IngestProgressPageDeps = { store: IngestStore; clock: Clock; csrfSecret: string };

// A file in one of these states changes no more: the polling script stops (or reloads the page).
const SETTLED = ['completed', 'failed', 'partial', 'needs-review'];
const FILES_SHOWN = 20;

export const PROGRESS_STYLE = trusted(`
.ingest-file header { display:flex; align-items:baseline; gap:.75rem; flex-wrap:wrap; }
.ingest-file h2 { margin:0; }
.bar { display:flex; align-items:center; gap:.75rem; margin:.75rem 0; }
progress { flex:1; height:1.1rem; appearance:none; -webkit-appearance:none; border:0; border-radius:999px; background:#e4e7eb; overflow:hidden; }
progress::-webkit-progress-bar { background:#e4e7eb; border-radius:999px; }
progress::-webkit-progress-value { background:var(--accent); border-radius:999px; transition:width .4s; }
progress::-moz-progress-bar { background:var(--accent); border-radius:999px; }
progress.stage { height:.6rem; min-width:120px; }
.bar b[data-field=stage-text] { font-weight:400; }
.bar b { min-width:4.5rem; font-weight:600; text-align:right; font-variant-numeric:tabular-nums; }
td.num { text-align:right; font-variant-numeric:tabular-nums; }
.badge.completed { background:var(--ok-bg); color:var(--ok); }
.badge.failed, .badge.partial { background:var(--err-bg); color:var(--err); }
.badge.in_progress, .badge.processing, .badge.pending { background:#dceefb; color:#0b4f8a; }
.badge.needs-review, .badge.waiting { background:#fff3c4; color:#8d6100; }
.badge.skipped { background:#e4e7eb; color:#52606d; }
`);

/** The polling script (web/account/ingest-progress.js) with the statuses after which it stops. */
export function progressScript(): Html {
  return html`${jsonData('ingest-progress-settings', { settled: SETTLED })}
  ${pageScript('ingest-progress.js')}`;
}

function when(iso: string | null, now: number): string {
  if (!iso) return '–';
  const seconds = Math.max(0, Math.round((Date.parse(iso) - now) / 1000));
  return seconds < 90 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

const rate = (value: number | null) => (value === null ? '–' : `${value.toLocaleString('en')} rows/s`);

// The same texts as web/account/ingest-progress.js writes while it polls.
const rowsText = (rows: { processed: number; total: number }) =>
  rows.total ? `${rows.processed.toLocaleString('en')} / ${rows.total.toLocaleString('en')}` : '–';
const batchesText = (batches: { current: number; total: number }) =>
  batches.total ? `${batches.current} / ${batches.total}` : '–';

/** A progress bar with its percentage (the page's script finds both by their data-field). */
function bar(kind: 'overall' | 'stage', value: number, label: string, extra: Html | '' = ''): Html {
  return html`<div class="bar">
    <progress class="${kind}" data-field="${kind}" max="100" value="${value}" aria-label="${label}">
      ${value} %
    </progress>
    <b data-field="${kind}-text">${value} %</b>
    ${extra}
  </div>`;
}

/** One file with its bars; `jobExtra` adds a job's own lines (my imports: its errors and actions). */
export function fileSection(
  file: IngestFileProgress,
  now: number,
  jobExtra: (jobId: number) => Html | '' = () => '',
): Html {
  return html`<section
    class="card ingest-file"
    id="import-${file.id}"
    data-file-id="${file.id}"
    data-status="${file.status}"
  >
    <header>
      <h2>${file.originalName}</h2>
      <span class="badge ${file.status}" data-field="status">${file.status}</span>
      <span class="muted"
        >#${file.id} · ${file.datasetsCount} dataset(s) · uploaded
        ${file.createdAt.slice(0, 19).replace('T', ' ')} UTC</span
      >
    </header>
    ${bar(
      'overall',
      file.overallProgress,
      `Overall progress of ${file.originalName}`,
      html`<span class="muted"
        >ETA <span data-field="eta">${when(file.estimatedCompletionTime, now)}</span></span
      >`,
    )}
    ${file.jobs.map(
      (job) =>
        html`<div data-job-id="${job.id}">
          <p>
            <b>${job.datasetName ?? `Dataset ${job.datasetId}`}</b>
            <span class="muted"
              >· stage
              <span data-field="current-stage">${job.currentStage}</span>
              ${job.results ? html`· ${String(job.results.created ?? 0)} created, ${String(job.results.duplicates ?? 0)} duplicates` : ''}
              ${job.errors ? html`· ${job.errors} invalid row(s)` : ''}</span
            >
          </p>
          <table>
            <thead>
              <tr>
                <th>Stage</th>
                <th>Status</th>
                <th>Progress</th>
                <th>Rows</th>
                <th>Batches</th>
                <th>Speed</th>
              </tr>
            </thead>
            <tbody>
              ${job.stages.map(
                (stage) =>
                  html`<tr data-stage="${stage.name}">
                    <td>${stage.displayName}</td>
                    <td>
                      <span class="badge ${stage.state}" data-field="stage-status"
                        >${stage.state.replace('_', ' ')}</span
                      >
                    </td>
                    <td>${bar('stage', stage.progress, stage.displayName)}</td>
                    <td class="num" data-field="rows">${rowsText(stage.rows)}</td>
                    <td class="num" data-field="batches">${batchesText(stage.batches)}</td>
                    <td class="num" data-field="rows-per-second">${rate(stage.performance.rowsPerSecond)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${jobExtra(job.id)}
        </div>`,
    )}
  </section>`;
}

/** The admin's manual re-queue (spec: FAILED → resumes at the failed task once the cause is fixed). */
function failedJobsView(token: string, jobs: FailedJobSummary[]): Html {
  if (jobs.length === 0) return html``;
  return html`<h2 id="failed-jobs">Failed jobs (all users)</h2>
    <table class="failed-jobs">
      <thead>
        <tr>
          <th>Job</th>
          <th>File</th>
          <th>Failed at stage</th>
          <th>Error</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${jobs.map(
          (job) =>
            html`<tr data-job-id="${job.id}">
              <td>${job.id}</td>
              <td>${job.fileName}</td>
              <td>${job.errorLog?.failedStage ?? '–'}</td>
              <td>${job.errorLog?.lastError ?? 'no error recorded'}</td>
              <td class="nowrap">
                <form method="post" action="/dashboard/ingest/jobs/${job.id}/requeue" class="inline">
                  ${csrfInput(token)}
                  <button type="submit" class="small">Re-queue</button>
                </form>
              </td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function ingestProgressView(files: IngestFileProgress[], now: number, failed: Html | '' = ''): Html {
  return html`<style>
      ${PROGRESS_STYLE}
    </style>
    <h1>Imports</h1>
    ${
      files.length === 0
        ? html`<div class="card">
            <p>No import yet. <a href="/account/imports/new">Import a file</a> with the import wizard.</p>
          </div>`
        : files.map((file) => fileSection(file, now))
    }
    ${failed} ${progressScript()}`;
}

export const ingestProgressPage: FastifyPluginAsync<IngestProgressPageDeps> = async (app, deps) => {
  const csrf = csrfProtection(deps.csrfSecret);
  const send = (reply: FastifyReply, status: number, body: string) =>
    htmlReply(reply, status, { scripts: true }).send(body);

  app.get('/dashboard/ingest', { schema: { hide: true } }, async (request, reply) => {
    const viewer = viewerOf(request);
    if (!viewer) return reply.redirect('/dashboard/login', 303);
    const token = csrf.token(request, reply);
    if (viewer.role !== 'admin') {
      return send(
        reply,
        403,
        page({
          title: 'Forbidden',
          body: messageView('Admins only', 'The dashboard is for admins; this account is not one.'),
        }),
      );
    }
    const files = await listIngestProgress(deps, viewer.id, FILES_SHOWN);
    const failed = failedJobsView(token, await failedJobsToRequeue(deps, viewer));
    return send(
      reply,
      200,
      page({
        title: 'Imports',
        active: '/dashboard/ingest',
        user: viewer,
        csrf: token,
        flash: flashFrom(request),
        body: ingestProgressView(files, deps.clock.now().getTime(), failed),
      }),
    );
  });
};
