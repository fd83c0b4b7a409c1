import type { DatasetChoice } from '../../../application/scrapers/scraper-collections.ts';
import type { SourceHealthView } from '../../../domain/source-health.ts';
import { alertAfterInput, healthLine } from '../source-health.ts';
import type { ReviewDuplicates } from '../../../domain/ingest/review.ts';
import { isFinished, type RunStatus } from '../../../domain/scrapers/runs.ts';
import { ENV_VARS } from '../../../domain/scrapers/scrapers.ts';
import type { Doc } from '../../../ports/collections/collection-repository.ts';
import type { ImportOutcome } from '../../../ports/ingest/import-listings.ts';
import { headRow } from '../account-pages.ts';
import { csrfInput } from '../csrf.ts';
import { datasetDataLinks } from '../data-links.ts';
import { type Html, html, trusted } from '../html.ts';
import { importOutcomeCell } from '../import-outcome.ts';
import { pageScript } from '../page-scripts.ts';
import { badge, HOME, logTail, SCRAPER_STYLE, seconds, when } from './scraper-list-view.ts';
import { actionButton } from './scraper-repo-view.ts';

// A scraper's page and a run's page. The scraper's settings are the fields of PATCH
// /api/scrapers/{id}: enabled, targetDataset (one of the caller's datasets), autoImport,
// reviewDuplicates, envVars and the webhook. Env var values are never written into a page: after
// saving, a variable shows its name and "value hidden", and can be replaced or removed. The webhook's
// URL is a credential: shown once, on the page that answers the post that made it.

const REVIEW_CHOICES: [ReviewDuplicates, string][] = [
  ['first-run', 'on the first run into the dataset only (rows repeated in one output: every run)'],
  ['always', 'on every run'],
  ['never', 'never'],
];

const selected = (yes: boolean) => (yes ? trusted('selected') : '');
const checked = (yes: boolean) => (yes ? trusted('checked') : '');

function settingsCard(token: string, scraper: Doc, datasets: DatasetChoice[]): Html {
  const target = scraper.targetDataset as number | null;
  const known = datasets.some((dataset) => dataset.id === target);
  return html`<section class="card" id="settings">
    <h2 style="margin-top:0">Settings</h2>
    <form method="post" action="${HOME}/scrapers/${scraper.id}/settings" class="stack">
      ${csrfInput(token)}
      <label class="check"
        ><input type="checkbox" name="enabled" ${checked(scraper.enabled === true)} /> Enabled
        <span class="muted">(a disabled scraper runs on no schedule)</span></label
      >
      <label
        >Target dataset
        <select name="targetDataset">
          <option value="">none: keep each run's CSV on the run</option>
          ${target !== null && !known ? html`<option value="${target}" selected>dataset ${target}</option>` : ''}
          ${datasets.map(
            (dataset) =>
              html`<option value="${dataset.id}" ${selected(dataset.id === target)}>
                ${dataset.catalogTitle}: ${dataset.title}
              </option>`,
          )}
        </select></label
      >
      ${
        datasets.length === 0
          ? html`<p class="muted">
              You have no dataset to import into yet: <a href="/account/imports/new">import a file</a> into a
              new dataset first, or create one with the collections API.
            </p>`
          : ''
      }
      <label class="check"
        ><input type="checkbox" name="autoImport" ${checked(scraper.autoImport === true)} /> Import each
        successful run's CSV into the target dataset</label
      >
      <label
        >Stop an import for review when most rows are duplicates
        <select name="reviewDuplicates">
          ${REVIEW_CHOICES.map(
            ([value, label]) =>
              html`<option value="${value}" ${selected(value === scraper.reviewDuplicates)}>
                ${label}
              </option>`,
          )}
        </select></label
      >
      ${alertAfterInput(scraper.health as SourceHealthView | undefined)}
      <p>${healthLine(scraper.health as SourceHealthView | undefined)}</p>
      <div><button type="submit">Save settings</button></div>
    </form>
  </section>`;
}

function envCard(token: string, scraper: Doc): Html {
  const base = `${HOME}/scrapers/${scraper.id}/env`;
  const names = Object.keys((scraper.envVars ?? {}) as Record<string, string>).sort();
  return html`<section class="card" id="env">
    <h2 style="margin-top:0">Environment variables</h2>
    <p class="muted">
      The scraper reads them with <code>os.environ</code> or <code>process.env</code>. Values are not shown
      after saving: replace a value or remove the variable.
    </p>
    ${
      names.length
        ? html`<table class="env">
            ${headRow('Name', 'Value', '', '')}
            <tbody>
              ${names.map(
                (name) =>
                  html`<tr data-env="${name}">
                    <td><code>${name}</code></td>
                    <td class="muted">value hidden</td>
                    <td>
                      <form method="post" action="${base}" class="inline">
                        ${csrfInput(token)}<input type="hidden" name="name" value="${name}" />
                        <input
                          type="text"
                          name="value"
                          aria-label="New value of ${name}"
                          placeholder="new value"
                          maxlength="${ENV_VARS.maxValueLength}"
                          autocomplete="off"
                          required
                        />
                        <button type="submit" class="small secondary">Replace</button>
                      </form>
                    </td>
                    <td>
                      ${actionButton(token, `${base}/remove`, 'Remove', { kind: 'danger', fields: { name } })}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : html`<p class="muted">None.</p>`
    }
    <form method="post" action="${base}" class="inline" style="margin-top:.75rem" id="env-add">
      ${csrfInput(token)}
      <input
        type="text"
        name="name"
        aria-label="Name"
        placeholder="NAME"
        pattern="${ENV_VARS.namePattern}"
        required
        style="width:14rem"
      />
      <input
        type="text"
        name="value"
        aria-label="Value"
        placeholder="value"
        maxlength="${ENV_VARS.maxValueLength}"
        autocomplete="off"
        style="width:22rem"
      />
      <button type="submit" class="small">Add</button>
    </form>
  </section>`;
}

function webhookCard(token: string, scraper: Doc, shownUrl: string | null): Html {
  const action = `${HOME}/scrapers/${scraper.id}/webhook`;
  const on = scraper.webhookEnabled === true;
  return html`<section class="card" id="webhook">
    <h2 style="margin-top:0">Webhook <span class="badge ${on ? 'on' : 'off'}">${on ? 'on' : 'off'}</span></h2>
    ${
      shownUrl
        ? html`<div class="flash ok" role="status">
            <p style="margin-top:0">
              POST to this URL to start a run; no login needed. It is shown <b>only this once</b>: copy it
              now.
            </p>
            <code class="webhook-url" data-field="webhook-url">${shownUrl}</code>
          </div>`
        : on
          ? html`<p class="muted">
              The URL was shown once when it was made. Rotate makes a new one (the old one stops working).
            </p>`
          : html`<p class="muted">Another system can start a run by posting to a secret URL.</p>`
    }
    <div class="actions">
      ${
        on
          ? html`${actionButton(token, action, 'Rotate URL', { kind: 'secondary', fields: { webhook: 'rotate' } })}
            ${actionButton(token, action, 'Turn off', { kind: 'danger', fields: { webhook: 'off' } })}`
          : actionButton(token, action, 'Turn on', { fields: { webhook: 'on' } })
      }
    </div>
  </section>`;
}

function runsTable(runs: Doc[]): Html {
  if (runs.length === 0) return html`<p class="muted">No runs yet.</p>`;
  return html`<table class="runs">
    ${headRow('Run', 'Status', 'Trigger', 'Queued', 'Duration', 'Rows', 'Import')}
    <tbody>
      ${runs.map(
        (run) =>
          html`<tr>
            <td><a href="${HOME}/runs/${run.id}">Run ${run.id}</a></td>
            <td>
              ${badge(run.status)}
              ${run.errorCode ? html`<span class="muted">${String(run.errorCode)}</span>` : ''}
            </td>
            <td>${String(run.triggeredBy)}</td>
            <td class="nowrap">${when(run.queuedAt)}</td>
            <td>${seconds(run.durationMs)}</td>
            <td>${run.outputRows ?? '—'}</td>
            <td>${importOutcomeCell(run.import as ImportOutcome | null)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

export function scraperView(
  token: string,
  scraper: Doc,
  repo: Doc,
  context: { datasets: DatasetChoice[]; runs: Doc[]; targetSlug: string | null; webhookUrl: string | null },
): Html {
  const base = `${HOME}/scrapers/${scraper.id}`;
  return html`${SCRAPER_STYLE}
    <p class="crumbs">
      <a href="${HOME}">Scrapers</a> › <a href="${HOME}/repos/${repo.id}">${String(repo.name)}</a> ›
      ${String(scraper.name)}
    </p>
    <div class="actions" style="justify-content:space-between; flex-wrap:wrap">
      <h1 style="margin:0">${String(scraper.name)} <span class="muted">${String(scraper.slug)}</span></h1>
      ${actionButton(token, `${base}/run`, 'Run now')}
    </div>
    <section class="card">
      <h2 style="margin-top:0">From scrapers.yml</h2>
      <dl class="facts">
        <dt>Runtime</dt>
        <dd>${String(scraper.runtime)}</dd>
        <dt>Entrypoint</dt>
        <dd><code>${String(scraper.entrypoint)}</code></dd>
        <dt>Output</dt>
        <dd><code>${String(scraper.outputFile)}</code></dd>
        <dt>Schedule</dt>
        <dd>
          ${scraper.schedule ? html`<code>${String(scraper.schedule)}</code> (UTC)` : html`<span class="muted">manual and webhook only</span>`}
        </dd>
        <dt>Limits</dt>
        <dd>${String(scraper.timeoutSecs)} s, ${String(scraper.memoryMb)} MB</dd>
      </dl>
      <p class="muted">These change with <a href="${HOME}/repos/${repo.id}">the repo's scrapers.yml</a>.</p>
    </section>
    ${context.targetSlug ? datasetDataLinks(context.targetSlug) : ''}
    ${webhookCard(token, scraper, context.webhookUrl)} ${settingsCard(token, scraper, context.datasets)}
    ${envCard(token, scraper)}
    <section class="card">
      <h2 style="margin-top:0">Last runs</h2>
      ${runsTable(context.runs)}
    </section>`;
}

function logBlock(label: string, text: unknown, kind = ''): Html {
  const { shown, cut } = logTail(text);
  return html`<h3>${label}</h3>
    ${cut ? html`<p class="muted">Only the end is shown; the API's run document has all of it.</p>` : ''}
    <pre class="log ${kind}" aria-label="${label}">${shown || '(empty)'}</pre>`;
}

export function runView(token: string, run: Doc, scraper: Doc, targetSlug: string | null): Html {
  const status = String(run.status) as RunStatus;
  const live = !isFinished(status);
  const outcome = run.import as ImportOutcome | null;
  return html`${SCRAPER_STYLE}
    <p class="crumbs">
      <a href="${HOME}">Scrapers</a> › <a href="${HOME}/scrapers/${scraper.id}">${String(scraper.name)}</a> ›
      Run ${run.id}
    </p>
    <div class="actions" style="justify-content:space-between; flex-wrap:wrap">
      <h1 style="margin:0">
        Run ${run.id} of ${String(scraper.name)} <span data-run-status="${status}">${badge(status)}</span>
      </h1>
      ${live ? actionButton(token, `${HOME}/runs/${run.id}/stop`, 'Stop run', { kind: 'danger' }) : ''}
    </div>
    ${
      live
        ? html`<p
            data-watch="/api/scraper-runs/${run.id}"
            data-watch-field="status"
            data-watch-value="${status}"
          >
            ${status === 'queued' ? 'Waiting for the runner.' : 'Running.'} This page shows the outcome when
            the run ends (<a href="${HOME}/runs/${run.id}">reload</a>).
          </p>`
        : ''
    }
    ${run.error ? html`<pre class="error">${String(run.error)}${run.errorCode ? ` (${String(run.errorCode)})` : ''}</pre>` : ''}
    <section class="card">
      <dl class="facts">
        <dt>Triggered by</dt>
        <dd>${String(run.triggeredBy)}</dd>
        <dt>Queued</dt>
        <dd>${when(run.queuedAt)}</dd>
        <dt>Started</dt>
        <dd>${when(run.startedAt)}</dd>
        <dt>Finished</dt>
        <dd>${when(run.finishedAt)}</dd>
        <dt>Duration</dt>
        <dd>${seconds(run.durationMs)}</dd>
        <dt>Exit code</dt>
        <dd>${run.exitCode ?? '—'}</dd>
        <dt>Output</dt>
        <dd data-field="output">
          ${
            run.outputRows === null || run.outputRows === undefined
              ? '—'
              : `${String(run.outputRows)} rows, ${String(run.outputBytes ?? 0)} bytes`
          }
        </dd>
        <dt>Import</dt>
        <dd data-field="import">
          ${
            outcome
              ? importOutcomeCell(outcome)
              : html`<span class="muted"
                  >${
                    run.resultFile || (!live && run.outputRows !== null && !run.ingestFile)
                      ? 'none: the scraper has no target dataset with auto-import; the CSV is kept on the run'
                      : '—'
                  }</span
                >`
          }
        </dd>
      </dl>
    </section>
    ${targetSlug ? datasetDataLinks(targetSlug) : ''}
    <section class="card">${logBlock('stdout', run.stdout)} ${logBlock('stderr', run.stderr, 'err')}</section>
    ${live ? pageScript('scraper-watch.js') : ''}`;
}
