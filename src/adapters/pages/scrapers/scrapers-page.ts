import { hasScraperAccess } from '../../../domain/access.ts';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findDocuments } from '../../../application/collections/collection-documents.ts';
import type { LoginDeps } from '../../../application/accounts/log-in.ts';
import { requestRepoSync } from '../../../application/scrapers/request-repo-sync.ts';
import {
  deleteRepoDocument,
  listScraperDocuments,
  readScraperDocument,
  type ScraperCollectionDeps,
} from '../../../application/scrapers/scraper-collections.ts';
import { triggerScraperRun } from '../../../application/scrapers/trigger-scraper-run.ts';
import { DomainError } from '../../../domain/errors.ts';
import { RateLimitedError } from '../../../domain/accounts/rate-limits.ts';
import type { Doc } from '../../../ports/collections/collection-repository.ts';
import type { ImportOutcome } from '../../../ports/ingest/import-listings.ts';
import { ACCOUNT_LOGIN, accountPages, hidden, type User } from '../account-pages.ts';
import { importOutcomeCell } from '../ingest/import-outcome.ts';
import { csrfInput, type Form, verifiedForm } from '../csrf.ts';
import { flashFrom, redirect } from '../replies.ts';
import { type Html, html } from '../html.ts';
import { registerLoginPages } from '../login-pages.ts';
import { messageView } from '../layout.ts';

// /account/scrapers (spec: Management page): a user's scraper repos with their sync status and
// source, their scrapers with last-run status and statistics, the actions force sync, trigger run
// and delete repo, and each scraper's run history with its output. Admins see every repo. Like the
// dashboard it is server-rendered, works without JavaScript, and every action is a form post with
// a CSRF token answered by a redirect. The actions are the same use cases as the API's.

type AccountScraperDeps = ScraperCollectionDeps & { login: LoginDeps; csrfSecret: string };

const HOME = '/account/scrapers';
const RUNS_SHOWN = 10;
/** Logs longer than this show their end only; the API has them whole. */
const LOG_SHOWN_BYTES = 64 * 1024;

const badge = (status: unknown) =>
  status
    ? html`<span class="badge ${String(status)}">${String(status)}</span>`
    : html`<span class="muted">never</span>`;
const when = (iso: unknown) => (typeof iso === 'string' ? iso.replace('T', ' ').slice(0, 19) + ' UTC' : '—');
const seconds = (ms: unknown) => (typeof ms === 'number' ? `${(ms / 1000).toFixed(1)} s` : '—');

function logTail(text: unknown): { shown: string; cut: boolean } {
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
                <td>${run.id}</td>
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
            <b>${String(scraper.name)}</b> <span class="muted">${String(scraper.slug)}</span>
            ${scraper.enabled ? '' : html`<span class="badge off">disabled</span>`}
          </td>
          <td>${String(scraper.runtime)}</td>
          <td class="nowrap">
            ${scraper.schedule ? html`<code>${String(scraper.schedule)}</code>` : html`<span class="muted">manual</span>`}
          </td>
          <td>${badge(stats.lastRunStatus)} <span class="muted">${when(stats.lastRunAt)}</span></td>
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

function source(repo: Doc): Html {
  return repo.sourceType === 'git'
    ? html`git <code>${String(repo.gitUrl)}</code> branch <code>${String(repo.gitBranch)}</code>`
    : html`upload, ${String(repo.fileCount ?? 0)} files`;
}

function accountScrapersView(
  token: string,
  user: User,
  repos: Doc[],
  scrapers: Doc[],
  runs: Map<number, { shown: Doc[]; total: number }>,
  owners: Map<number, string>,
): Html {
  return html`<h1>${user.role === 'admin' ? 'All scraper repos' : 'Your scrapers'}</h1>
    ${
      repos.length === 0
        ? html`<div class="card">
            <p>
              No scraper repos yet. Create one with <code>POST /api/scraper-repos</code> (see
              docs/scrapers.md).
            </p>
          </div>`
        : ''
    }
    ${repos.map(
      (repo) =>
        html`<section class="card repo" id="repo-${repo.id}">
          <div class="actions" style="justify-content:space-between">
            <h2 style="margin:0">${String(repo.name)} <span class="muted">${String(repo.slug)}</span></h2>
            <div class="actions">
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

export const accountScraperRoutes: FastifyPluginAsync<AccountScraperDeps> = async (app, deps) => {
  // The /account frame every account page shares (navigation, login redirect, CSRF, error pages).
  const pages = accountPages(app, deps.csrfSecret, HOME);
  const { csrf, render } = pages;

  /** The logged-in user with scraper access, or a redirect to the login (or a 403 page). */
  const scraperUser = (request: FastifyRequest, reply: FastifyReply): User | null => {
    const viewer = pages.user(request, reply, HOME);
    if (!viewer) return null;
    if (!hasScraperAccess(viewer)) {
      void render(
        reply,
        403,
        'Scrapers',
        messageView(
          'Scrapers need trust level 3',
          'Scrapers are open to Trusted users (trust level 3) and above. Ask an admin to raise your trust level.',
        ),
        { user: viewer, token: csrf.token(request, reply) },
      );
      return null;
    }
    return viewer;
  };

  const form = (request: FastifyRequest): Form => verifiedForm(csrf, request);

  registerLoginPages(app, {
    login: deps.login,
    csrf,
    paths: { login: ACCOUNT_LOGIN, logout: '/account/logout', home: HOME },
    heading: 'Log in',
    registerPath: '/account/register',
    render: (reply, status, body, flash) => render(reply, status, 'Log in', body, { flash }),
  });

  app.get(HOME, hidden, async (request, reply) => {
    const user = scraperUser(request, reply);
    if (!user) return reply;
    const token = csrf.token(request, reply);
    const all = { limit: 1000 };
    const repos = await listScraperDocuments(deps, 'scraper-repos', user, { ...all, sort: 'name' });
    const scrapers = await listScraperDocuments(deps, 'scrapers', user, { ...all, sort: 'slug' });
    const runList = await listScraperDocuments(deps, 'scraper-runs', user, { ...all, sort: '-id' });
    const runs = new Map<number, { shown: Doc[]; total: number }>();
    for (const run of runList.docs) {
      const entry = runs.get(run.scraper as number) ?? { shown: [], total: 0 };
      entry.total += 1;
      // Lists leave the logs out: the runs shown are read one by one, with their output.
      if (entry.shown.length < RUNS_SHOWN)
        entry.shown.push(await readScraperDocument(deps, 'scraper-runs', user, run.id));
      runs.set(run.scraper as number, entry);
    }
    const owners = new Map<number, string>();
    if (user.role === 'admin') {
      const users = await findDocuments(deps, 'users', user, { limit: 1000 });
      for (const doc of users.docs) owners.set(doc.id, String(doc.email));
    }
    return render(
      reply,
      200,
      'Scrapers',
      accountScrapersView(token, user, repos.docs, scrapers.docs, runs, owners),
      {
        user,
        token,
        flash: flashFrom(request),
      },
    );
  });

  /** A form post by a user with scraper access; a refused action comes back with its message. */
  const action = (path: string, handler: (user: User, id: number) => Promise<string>) =>
    app.post(path, hidden, async (request, reply) => {
      const user = scraperUser(request, reply);
      if (!user) return reply;
      form(request);
      try {
        const notice = await handler(user, Number((request.params as { id: string }).id));
        return redirect(reply, HOME, { notice });
      } catch (error) {
        if (error instanceof DomainError && !(error instanceof RateLimitedError))
          return redirect(reply, HOME, { error: error.message });
        throw error;
      }
    });

  action(`${HOME}/repos/:id/sync`, async (user, id) => {
    await readScraperDocument(deps, 'scraper-repos', user, id);
    await requestRepoSync(deps.scrapers, user, id);
    return 'Sync queued.';
  });

  action(`${HOME}/repos/:id/delete`, async (user, id) => {
    const doc = await deleteRepoDocument(deps, user, id);
    return `Deleted repo ${String(doc.name)}.`;
  });

  action(`${HOME}/scrapers/:id/run`, async (user, id) => {
    const scraper = await readScraperDocument(deps, 'scrapers', user, id);
    const { run } = await triggerScraperRun(deps.scrapers, user, id);
    return `Run ${run.id} of ${String(scraper.name)} queued.`;
  });
};
