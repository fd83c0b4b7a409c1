import { CODE_LIMITS } from '../../../application/scrapers/scraper-collections.ts';
import type { Doc } from '../../../ports/collections/collection-repository.ts';
import { csrfInput } from '../csrf.ts';
import { type Html, html, trusted } from '../html.ts';
import { pageScript } from '../page-scripts.ts';
import { badge, HOME, SCRAPER_STYLE, source, when } from './scraper-list-view.ts';

// The repo pages of /account/scrapers: a new repo from files or from git, and one repo with what its
// scrapers.yml declares or what is wrong with it (the sync's own list of problems, one per line, each
// with its path), its scrapers, and its files to edit, add, upload and delete (upload repos) or its
// git URL and branch (git repos). Every form posts to a use case of the API (scrapers-page.ts).

/** A form that posts one action and comes back to `back`. */
export function actionButton(
  token: string,
  action: string,
  label: string,
  options: { kind?: string; back?: string; fields?: Record<string, string> } = {},
): Html {
  return html`<form method="post" action="${action}" class="inline">
    ${csrfInput(token)}
    ${options.back ? html`<input type="hidden" name="back" value="${options.back}" />` : ''}
    ${Object.entries(options.fields ?? {}).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
    )}
    <button type="submit" class="small ${options.kind ?? ''}">${label}</button>
  </form>`;
}

export function newRepoView(token: string): Html {
  const identity = html`<label>Name <input type="text" name="name" maxlength="255" required /></label>
    <label
      >Slug <span class="muted">(lowercase letters, digits and hyphens; empty: made from the name)</span>
      <input type="text" name="slug" maxlength="128" pattern="[a-z0-9-]*"
    /></label>`;
  return html`${SCRAPER_STYLE}
    <p class="crumbs"><a href="${HOME}">Scrapers</a> › New repo</p>
    <h1>New scraper repo</h1>
    <p class="muted">
      A repo holds a <code>scrapers.yml</code> at its root, which declares its scrapers, and their code. Once
      it is created, Chronomap reads <code>scrapers.yml</code> and makes the scrapers it declares.
    </p>
    <div class="row">
      <section class="card" id="new-upload">
        <h2 style="margin-top:0">From files</h2>
        <form method="post" action="${HOME}/repos" enctype="multipart/form-data" class="stack">
          ${csrfInput(token)}<input type="hidden" name="sourceType" value="upload" />
          ${identity}
          <label
            >Files
            <span class="muted"
              >(scrapers.yml and the scripts; text only, at most ${CODE_LIMITS.maxFiles} files and
              ${CODE_LIMITS.maxTotalBytes / 1024} KB in all)</span
            >
            <input type="file" name="files" multiple required
          /></label>
          <p class="muted">Files in folders can be added on the repo's page with their path.</p>
          <div><button type="submit">Create repo</button></div>
        </form>
      </section>
      <section class="card" id="new-git">
        <h2 style="margin-top:0">From git</h2>
        <form method="post" action="${HOME}/repos" class="stack">
          ${csrfInput(token)}<input type="hidden" name="sourceType" value="git" />
          ${identity}
          <label
            >Git URL <span class="muted">(https://, without credentials)</span>
            <input
              type="text"
              name="gitUrl"
              maxlength="2048"
              placeholder="https://git.example.org/you/scraper.git"
              required
          /></label>
          <label>Branch <input type="text" name="gitBranch" maxlength="200" placeholder="main" /></label>
          <div><button type="submit">Create repo</button></div>
        </form>
      </section>
    </div>`;
}

/** What the last sync found: the scrapers, or every problem of scrapers.yml, or that it is reading it. */
function manifestCard(repo: Doc): Html {
  const status = String(repo.syncStatus);
  const busy = status === 'pending' || status === 'syncing';
  const problems =
    typeof repo.lastSyncError === 'string' ? repo.lastSyncError.split('\n').filter(Boolean) : [];
  return html`<section class="card" id="manifest">
    <h2 style="margin-top:0">scrapers.yml ${badge(status)}</h2>
    ${
      busy
        ? html`<p
            data-watch="/api/scraper-repos/${repo.id}"
            data-watch-field="syncStatus"
            data-watch-value="${status}"
          >
            Chronomap is reading <code>scrapers.yml</code>; this page shows the outcome when it is done (<a
              href="${HOME}/repos/${repo.id}"
              >reload</a
            >).
          </p>`
        : ''
    }
    ${
      status === 'failed'
        ? html`<p>
              The last sync (${when(repo.lastSyncAt)}) found these problems; the scrapers stay as they were
              until they are fixed:
            </p>
            <ul class="problems" aria-label="Problems in scrapers.yml">
              ${problems.map((problem) => html`<li>${problem}</li>`)}
            </ul>`
        : ''
    }
    ${status === 'synced' ? html`<p class="muted">Read without problems ${when(repo.lastSyncAt)}.</p>` : ''}
  </section>`;
}

function scrapersCard(token: string, repo: Doc, scrapers: Doc[]): Html {
  const back = `${HOME}/repos/${repo.id}`;
  return html`<section class="card">
    <h2 style="margin-top:0">Scrapers</h2>
    ${
      scrapers.length === 0
        ? html`<p class="muted">None yet: they appear when scrapers.yml has been read without problems.</p>`
        : html`<table>
            <tbody>
              ${scrapers.map(
                (scraper) =>
                  html`<tr id="scraper-${scraper.id}">
                    <td>
                      <a href="${HOME}/scrapers/${scraper.id}"><b>${String(scraper.name)}</b></a>
                    </td>
                    <td class="muted">
                      ${String(scraper.slug)} · ${String(scraper.runtime)} ·
                      <code>${String(scraper.entrypoint)}</code>
                    </td>
                    <td class="nowrap">
                      <div class="actions">
                        <a href="${HOME}/scrapers/${scraper.id}">Settings</a>
                        ${actionButton(token, `${HOME}/scrapers/${scraper.id}/run`, 'Run now', { back })}
                      </div>
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

const sizeOf = (text: string) => {
  const bytes = Buffer.byteLength(text);
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`;
};

function filesCard(token: string, repo: Doc, open: string | null): Html {
  const code = (repo.code ?? {}) as Record<string, string>;
  const names = Object.keys(code).sort((a, b) =>
    a === 'scrapers.yml' ? -1 : b === 'scrapers.yml' ? 1 : a.localeCompare(b),
  );
  const base = `${HOME}/repos/${repo.id}`;
  const opened = open !== null && open in code ? open : null;
  return html`<section class="card" id="files">
    <h2 style="margin-top:0">Files</h2>
    <table class="files">
      <tbody>
        ${names.map(
          (name) =>
            html`<tr class="${name === opened ? 'open' : ''}">
              <td><a href="${base}?file=${encodeURIComponent(name)}#editor">${name}</a></td>
              <td class="muted">${sizeOf(code[name] ?? '')}</td>
              <td class="nowrap">
                ${actionButton(token, `${base}/files/delete`, 'Delete', { kind: 'danger', fields: { path: name } })}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${
      opened !== null
        ? html`<form method="post" action="${base}/files" class="stack wide" id="editor">
            ${csrfInput(token)}<input type="hidden" name="original" value="${opened}" />
            <label
              >Path
              <input
                type="text"
                name="path"
                value="${opened}"
                maxlength="${CODE_LIMITS.maxFileNameLength}"
                required
            /></label>
            <label
              >Content
              <textarea name="content" class="code" spellcheck="false">${code[opened] ?? ''}</textarea>
            </label>
            <div class="actions">
              <button type="submit">Save ${opened}</button> <a href="${base}#files">Close</a>
              <span class="muted">Saving queues a new sync of scrapers.yml.</span>
            </div>
          </form>`
        : ''
    }
    <details ${names.length ? '' : trusted('open')}>
      <summary>New file</summary>
      <form method="post" action="${base}/files" class="stack wide">
        ${csrfInput(token)}
        <label
          >Path
          <input
            type="text"
            name="path"
            maxlength="${CODE_LIMITS.maxFileNameLength}"
            placeholder="lib/helpers.py"
            required
        /></label>
        <label>Content <textarea name="content" class="code" spellcheck="false"></textarea></label>
        <div><button type="submit">Add file</button></div>
      </form>
    </details>
    <details>
      <summary>Upload files</summary>
      <form method="post" action="${base}/upload" enctype="multipart/form-data" class="stack">
        ${csrfInput(token)}
        <label
          >Files <span class="muted">(a file with the name of one above replaces it)</span>
          <input type="file" name="files" multiple required
        /></label>
        <div><button type="submit">Upload</button></div>
      </form>
    </details>
  </section>`;
}

function gitCard(token: string, repo: Doc): Html {
  return html`<section class="card" id="git">
    <h2 style="margin-top:0">Git source</h2>
    <p class="muted">Each run clones the branch; a changed scrapers.yml takes effect with the next sync.</p>
    <form method="post" action="${HOME}/repos/${repo.id}/edit" class="stack">
      ${csrfInput(token)}
      <label
        >Git URL
        <input type="text" name="gitUrl" value="${String(repo.gitUrl ?? '')}" maxlength="2048" required
      /></label>
      <label
        >Branch <input type="text" name="gitBranch" value="${String(repo.gitBranch ?? '')}" maxlength="200"
      /></label>
      <div><button type="submit">Save</button></div>
    </form>
  </section>`;
}

function identityCard(token: string, repo: Doc): Html {
  return html`<details class="card">
    <summary>Name and slug</summary>
    <form method="post" action="${HOME}/repos/${repo.id}/edit" class="stack">
      ${csrfInput(token)}
      <label
        >Name <input type="text" name="name" value="${String(repo.name)}" maxlength="255" required
      /></label>
      <label
        >Slug <input type="text" name="slug" value="${String(repo.slug)}" maxlength="128" required
      /></label>
      <div><button type="submit">Save</button></div>
    </form>
  </details>`;
}

export function repoView(token: string, repo: Doc, scrapers: Doc[], open: string | null): Html {
  const base = `${HOME}/repos/${repo.id}`;
  const busy = repo.syncStatus === 'pending' || repo.syncStatus === 'syncing';
  return html`${SCRAPER_STYLE}
    <p class="crumbs"><a href="${HOME}">Scrapers</a> › ${String(repo.name)}</p>
    <div class="actions" style="justify-content:space-between; flex-wrap:wrap">
      <h1 style="margin:0">${String(repo.name)} <span class="muted">${String(repo.slug)}</span></h1>
      <div class="actions">
        ${actionButton(token, `${base}/sync`, 'Force sync', { kind: 'secondary', back: base })}
        ${actionButton(token, `${base}/delete`, 'Delete repo', { kind: 'danger' })}
      </div>
    </div>
    <p>Source: ${source(repo)}</p>
    ${manifestCard(repo)} ${scrapersCard(token, repo, scrapers)}
    ${repo.sourceType === 'git' ? gitCard(token, repo) : filesCard(token, repo, open)}
    ${identityCard(token, repo)} ${busy ? pageScript('scraper-watch.js') : ''}`;
}
