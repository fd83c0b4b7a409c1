import type { Doc } from '../../../ports/collections/collection-repository.ts';
import type { SourceHealthView } from '../../../domain/source-health.ts';
import { healthBanner, healthLine } from '../source-health.ts';
import type { ImportOutcome } from '../../../ports/ingest/import-listings.ts';
import type { User } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { type Html, html, trusted } from '../html.ts';
import { importOutcomeCell } from '../import-outcome.ts';

// The list of /account/scrapers: every repo of the caller (admins: all) with its sync status and
// source, its scrapers with last-run status and statistics, and each scraper's run history with its
// output. Names lead to the repo, scraper and run pages (scraper-repo-view.ts, scraper-view.ts).

export const HOME = '/account/scrapers';
/** What the scraper pages add to the account pages' stylesheet (layout.ts), in each page's body. */
export const SCRAPER_STYLE = html`<style>
  ${trusted(`
a.button { display:inline-block; font-weight:600; padding:.5rem 1rem; border-radius:6px; background:var(--accent);
  color:var(--accent-ink); text-decoration:none; }
a.button.secondary { background:#fff; color:var(--accent); border:1px solid var(--accent); }
.crumbs { margin:-.5rem 0 1rem; color:var(--muted); }
.crumbs + .actions { margin-bottom:1.25rem; }
table.env input[type=text] { width:16rem; }
section.card > h3:first-child { margin-top:0; }
table.env form.inline { flex-wrap:nowrap; }
textarea.code { font:13px/1.45 ui-monospace, "DejaVu Sans Mono", Menlo, monospace; min-height:22rem; white-space:pre; tab-size:4; }
ul.problems { margin:.5rem 0; padding-left:1.25rem; color:var(--err); }
ul.problems li { font-family:ui-monospace, "DejaVu Sans Mono", Menlo, monospace; font-size:.92em; }
.files { width:auto; min-width:60%; }
label .muted { font-weight:400; }
.files td:first-child { font-family:ui-monospace, "DejaVu Sans Mono", Menlo, monospace; }
tr.open td { background:#eef4fd; }
dl.facts { display:grid; grid-template-columns:max-content 1fr; gap:.35rem 1.25rem; margin:0; }
dl.facts dt { color:var(--muted); }
dl.facts dd { margin:0; }
.webhook-url { font-size:1.05em; word-break:break-all; background:#fff3c4; padding:.4rem .6rem; border-radius:6px; display:block; }
form.stack.wide { max-width:none; }
`)}
</style>`;

/** Logs longer than this show their end only; the API has them whole. */
const LOG_SHOWN_BYTES = 64 * 1024;

export const badge = (status: unknown) =>
  status
    ? html`<span class="badge ${String(status)}">${String(status)}</span>`
    : html`<span class="muted">never</span>`;
export const when = (iso: unknown) =>
  typeof iso === 'string' ? iso.replace('T', ' ').slice(0, 19) + ' UTC' : '—';
export const seconds = (ms: unknown) => (typeof ms === 'number' ? `${(ms / 1000).toFixed(1)} s` : '—');

export function logTail(text: unknown): { shown: string; cut: boolean } {
  const value = typeof text === 'string' ? text : '';
  if (value.length <= LOG_SHOWN_BYTES) return { shown: value, cut: false };
  return { shown: value.slice(-LOG_SHOWN_BYTES), cut: true };
}

function output(run: Doc): Html {
  const stdout = logTail(run.stdout);
  const stderr = logTail(run.stderr);
  const cut = stdout.cut || stderr.cut;
  return html`<details class="output">
    <summary>Output of run ${run.id}</summary>
    ${run.error ? html`<pre class="error">${String(run.error)}</pre>` : ''}
    <div class="muted">stdout</div>
    <pre class="log" aria-label="stdout of run ${run.id}">${stdout.shown || '(empty)'}</pre>
    <div class="muted">stderr</div>
    <pre class="log err" aria-label="stderr of run ${run.id}">${stderr.shown || '(empty)'}</pre>
    ${
      cut
        ? html`<p class="muted">
            Only the end of the output is shown; GET /api/scraper-runs/${run.id} has all of it.
          </p>`
        : ''
    }
  </details>`;
}

function runHistory(runs: Doc[], total: number): Html {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`<details class="history">
    <summary>
      Run history (${total > runs.length ? `last ${runs.length} of ${total}` : String(total)})
    </summary>
    <table>
      <thead>
        <tr>
          <th>Run</th>
          <th>Status</th>
          <th>Trigger</th>
          <th>Queued</th>
          <th>Duration</th>
          <th>Exit</th>
          <th>Rows</th>
          <th>Import</th>
        </tr>
      </thead>
      <tbody>
        ${runs.map(
          (run) =>
            html`<tr>
                <td><a href="${HOME}/runs/${run.id}">${run.id}</a></td>
                <td>
                  ${badge(run.status)}
                  ${run.errorCode ? html`<span class="muted">${String(run.errorCode)}</span>` : ''}
                </td>
                <td>${String(run.triggeredBy)}</td>
                <td>${when(run.queuedAt)}</td>
                <td>${seconds(run.durationMs)}</td>
                <td>${run.exitCode ?? '—'}</td>
                <td>${run.outputRows ?? '—'}</td>
                <td>${importOutcomeCell(run.import as ImportOutcome | null)}</td>
              </tr>
              <tr>
                <td colspan="8">${output(run)}</td>
              </tr>`,
        )}
      </tbody>
    </table>
  </details>`;
}

function scraperRows(
  token: string,
  scrapers: Doc[],
  runs: Map<number, { shown: Doc[]; total: number }>,
): Html {
  if (scrapers.length === 0)
    return html`<p class="muted">No scrapers yet: they appear when the repo's scrapers.yml has synced.</p>`;
  return html`<table class="scrapers">
    <thead>
      <tr>
        <th>Scraper</th>
        <th>Runtime</th>
        <th>Schedule</th>
        <th>Last run</th>
        <th>Runs (ok / failed)</th>
        <th>Last duration</th>
        <th></th>
      </tr>
    </thead>
    ${scrapers.map((scraper) => {
      const stats = scraper.statistics as Record<string, unknown>;
      const history = runs.get(scraper.id) ?? { shown: [], total: 0 };
      return html`<tbody class="scraper" id="scraper-${scraper.id}">
        <tr>
          <td>
            <a href="${HOME}/scrapers/${scraper.id}"><b>${String(scraper.name)}</b></a>
            <span class="muted">${String(scraper.slug)}</span>
            ${scraper.enabled ? '' : html`<span class="badge off">disabled</span>`}
          </td>
          <td>${String(scraper.runtime)}</td>
          <td class="nowrap">
            ${scraper.schedule ? html`<code>${String(scraper.schedule)}</code>` : html`<span class="muted">manual</span>`}
          </td>
          <td>
            ${badge(stats.lastRunStatus)} <span class="muted">${when(stats.lastRunAt)}</span>
            ${healthLine(scraper.health as SourceHealthView | undefined)}
          </td>
          <td>${String(stats.totalRuns)} (${String(stats.successRuns)} / ${String(stats.failedRuns)})</td>
          <td>${seconds(stats.lastRunDurationMs)}</td>
          <td class="nowrap">
            <form method="post" action="${HOME}/scrapers/${scraper.id}/run" class="inline">
              ${csrfInput(token)}<button type="submit" class="small">Run now</button>
            </form>
          </td>
        </tr>
        <tr>
          <td colspan="7">${runHistory(history.shown, history.total)}</td>
        </tr>
      </tbody>`;
    })}
  </table>`;
}

export function source(repo: Doc): Html {
  return repo.sourceType === 'git'
    ? html`git <code>${String(repo.gitUrl)}</code> branch <code>${String(repo.gitBranch)}</code>`
    : html`upload, ${String(repo.fileCount ?? Object.keys(repo.code ?? {}).length)} files`;
}

export function accountScrapersView(
  token: string,
  user: User,
  repos: Doc[],
  scrapers: Doc[],
  runs: Map<number, { shown: Doc[]; total: number }>,
  owners: Map<number, string>,
): Html {
  return html`${SCRAPER_STYLE}
    <div class="actions" style="justify-content:space-between">
      <h1>${user.role === 'admin' ? 'All scraper repos' : 'Your scrapers'}</h1>
      <a href="${HOME}/new" class="button">New repo</a>
    </div>
    ${healthBanner(scrapers.map((s) => ({ name: String(s.name), health: s.health as SourceHealthView | undefined })))}
    ${
      repos.length === 0
        ? html`<div class="card">
            <p>
              No scraper repos yet: <a href="${HOME}/new">create one</a> from the files of a scraper (<code
                >npx chronomap-scraper init</code
              >
              writes them) or from a git repository.
            </p>
          </div>`
        : ''
    }
    ${repos.map(
      (repo) =>
        html`<section class="card repo" id="repo-${repo.id}">
          <div class="actions" style="justify-content:space-between">
            <h2 style="margin:0">
              <a href="${HOME}/repos/${repo.id}">${String(repo.name)}</a>
              <span class="muted">${String(repo.slug)}</span>
            </h2>
            <div class="actions">
              <a href="${HOME}/repos/${repo.id}">Files and problems</a>
              <form method="post" action="${HOME}/repos/${repo.id}/sync" class="inline">
                ${csrfInput(token)}<button type="submit" class="secondary small">Force sync</button>
              </form>
              <form method="post" action="${HOME}/repos/${repo.id}/delete" class="inline">
                ${csrfInput(token)}<button type="submit" class="danger small">Delete repo</button>
              </form>
            </div>
          </div>
          <p>
            Sync ${badge(repo.syncStatus)} <span class="muted">last ${when(repo.lastSyncAt)}</span> · Source:
            ${source(repo)}
            ${
              user.role === 'admin' && typeof repo.createdBy === 'number'
                ? html` · Owner: ${owners.get(repo.createdBy) ?? `user ${repo.createdBy}`}`
                : ''
            }
          </p>
          ${repo.lastSyncError ? html`<pre class="error">${String(repo.lastSyncError)}</pre>` : ''}
          ${scraperRows(
            token,
            scrapers.filter((scraper) => scraper.repo === repo.id),
            runs,
          )}
        </section>`,
    )}`;
}
