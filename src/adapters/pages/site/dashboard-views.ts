import { FEATURE_FLAG_NAMES, FEATURE_FLAGS, type FeatureFlags } from '../../../domain/site/feature-flags.ts';
import { TRUST_LEVELS } from '../../../domain/accounts/users.ts';
import { MAX_SLUG_LENGTH, SLUG_PATTERN } from '../../../domain/collections/slugs.ts';
import type { Doc } from '../../../ports/collections/collection-repository.ts';
import type { QuotaStatus } from '../../../ports/accounts/quotas.ts';
import { csrfInput } from '../csrf.ts';
import { datasetDataLinks } from '../data-links.ts';
import { type Html, html } from '../html.ts';

// Page bodies. Every form carries the CSRF token; every value goes through the escaping `html` tag.

const visibility = (isPublic: unknown) =>
  isPublic
    ? html`<span class="badge public">public</span>`
    : html`<span class="badge private">private</span>`;

export function overviewView(
  counts: Record<'users' | 'catalogs' | 'datasets' | 'events', number>,
  flags: FeatureFlags,
): Html {
  return html`<h1>Overview</h1>
    <div class="stats">
      <a class="stat" href="/dashboard/users"><b>${counts.users}</b><span>users</span></a>
      <a class="stat" href="/dashboard/catalogs"><b>${counts.catalogs}</b><span>catalogs</span></a>
      <div class="stat"><b>${counts.datasets}</b><span>datasets</span></div>
      <div class="stat"><b>${counts.events}</b><span>events</span></div>
    </div>
    <h2>Feature flags</h2>
    <div class="card flags">
      ${FEATURE_FLAG_NAMES.map(
        (name) =>
          html`<div>
            ${flags[name] ? html`<span class="badge on">on</span>` : html`<span class="badge off">off</span>`}
            <b>${name}</b>
            <span class="muted">— ${FEATURE_FLAGS[name].description}</span>
          </div>`,
      )}
      <p><a href="/dashboard/settings">Change settings</a></p>
    </div>`;
}

export function settingsView(csrf: string, flags: FeatureFlags): Html {
  return html`<h1>Settings</h1>
    <form method="post" action="/dashboard/settings" class="card stack">
      ${csrfInput(csrf)}
      <h2 style="margin-top:0">Feature flags</h2>
      ${FEATURE_FLAG_NAMES.map(
        (name) =>
          html`<label class="check"
            ><input type="checkbox" name="${name}" value="on" ${flags[name] ? 'checked' : ''} />
            <span
              ><b>${name}</b><br /><span class="muted"
                >${FEATURE_FLAGS[name].description} (default:
                ${FEATURE_FLAGS[name].default ? 'on' : 'off'})</span
              ></span
            ></label
          >`,
      )}
      <div><button type="submit">Save settings</button></div>
    </form>`;
}

const USAGE_SHOWN = [
  'importJobsPerDay',
  'fileUploadsPerDay',
  'draftStorageMB',
  'totalEvents',
  'scraperRunsPerDay',
] as const;

function usage(statuses: QuotaStatus[]): Html {
  return html`<span class="usage"
    >${USAGE_SHOWN.map((name) => {
      const s = statuses.find((q) => q.quota === name);
      if (!s) return '';
      return html`${name}: <b>${s.used}</b>/${s.limit === null ? '∞' : s.limit}<br />`;
    })}</span
  >`;
}

export function usersView(
  csrf: string,
  users: { doc: Doc; quotas: QuotaStatus[] }[],
  self: number,
  paging: { page: number; totalPages: number; totalDocs: number },
): Html {
  return html`<h1>Users <span class="muted">(${paging.totalDocs})</span></h1>
    <table>
      <thead>
        <tr>
          <th>Email</th>
          <th>Role and trust level</th>
          <th>Quota usage today</th>
          <th>Since</th>
        </tr>
      </thead>
      <tbody>
        ${users.map(
          ({ doc, quotas }) =>
            html`<tr>
              <td>${doc.email}${doc.id === self ? html` <span class="muted">(you)</span>` : ''}</td>
              <td>
                <form method="post" action="/dashboard/users/${doc.id}" class="inline">
                  ${csrfInput(csrf)}
                  <select
                    name="role"
                    class="small"
                    aria-label="Role of ${doc.email}"
                    ${doc.id === self ? 'disabled' : ''}
                  >
                    ${(['user', 'admin'] as const).map((role) => html`<option value="${role}" ${doc.role === role ? 'selected' : ''}>${role}</option>`)}
                  </select>
                  <select name="trustLevel" class="small" aria-label="Trust level of ${doc.email}">
                    ${Object.entries(TRUST_LEVELS).map(
                      ([level, name]) =>
                        html`<option value="${level}" ${String(doc.trustLevel) === level ? 'selected' : ''}>
                          ${level} ${name}
                        </option>`,
                    )}
                  </select>
                  <button type="submit" class="small">Save</button>
                </form>
              </td>
              <td>${usage(quotas)}</td>
              <td class="muted">${String(doc.createdAt).slice(0, 10)}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${pager('/dashboard/users', paging)}`;
}

function pager(base: string, paging: { page: number; totalPages: number }): Html {
  if (paging.totalPages <= 1) return html``;
  return html`<p class="actions">
    ${paging.page > 1 ? html`<a href="${base}?page=${paging.page - 1}">← Previous</a>` : ''}
    <span class="muted">Page ${paging.page} of ${paging.totalPages}</span>
    ${paging.page < paging.totalPages ? html`<a href="${base}?page=${paging.page + 1}">Next →</a>` : ''}
  </p>`;
}

function table(headers: string[], rows: Html[], empty: string): Html {
  return html`<table>
    <thead>
      <tr>
        ${headers.map((header) => html`<th>${header}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${
        rows.length === 0
          ? html`<tr>
              <td colspan="${headers.length}" class="muted">${empty}</td>
            </tr>`
          : rows
      }
    </tbody>
  </table>`;
}

function describedFields(values: Record<string, unknown>): Html {
  return html`<div class="row">
      <label
        >Title <input type="text" name="title" value="${String(values.title ?? '')}" required maxlength="255"
      /></label>
      <label
        >Slug
        <input
          type="text"
          name="slug"
          value="${String(values.slug ?? '')}"
          required
          maxlength="${MAX_SLUG_LENGTH}"
          pattern="${SLUG_PATTERN.source}"
          title="lower-case letters, digits and single dashes"
      /></label>
    </div>
    <label>Description <textarea name="description">${String(values.description ?? '')}</textarea></label>
    <label class="check"
      ><input type="checkbox" name="isPublic" value="on" ${values.isPublic ? 'checked' : ''} /> Public (anyone
      may see it)</label
    >`;
}

export function catalogsView(
  csrf: string,
  catalogs: Doc[],
  owners: Map<number, string>,
  datasetCounts: Map<number, number>,
): Html {
  return html`<h1>Catalogs</h1>
    ${table(
      ['Title', 'Slug', 'Visibility', 'Datasets', 'Owner'],
      catalogs.map(
        (c) =>
          html`<tr>
            <td><a href="/dashboard/catalogs/${c.id}">${c.title}</a></td>
            <td class="muted">${c.slug}</td>
            <td>${visibility(c.isPublic)}</td>
            <td>${datasetCounts.get(c.id) ?? 0}</td>
            <td class="muted">
              ${typeof c.createdBy === 'number' ? (owners.get(c.createdBy) ?? `#${c.createdBy}`) : '—'}
            </td>
          </tr>`,
      ),
      'No catalogs yet.',
    )}
    <h2>New catalog</h2>
    <form method="post" action="/dashboard/catalogs" class="card stack">
      ${csrfInput(csrf)} ${describedFields({})}
      <div><button type="submit">Create catalog</button></div>
    </form>`;
}

export function catalogView(csrf: string, catalog: Doc, datasets: Doc[]): Html {
  return html`<p><a href="/dashboard/catalogs">← Catalogs</a></p>
    <h1>${catalog.title} ${visibility(catalog.isPublic)}</h1>
    <form method="post" action="/dashboard/catalogs/${catalog.id}" class="card stack">
      ${csrfInput(csrf)} ${describedFields(catalog)}
      <div class="actions"><button type="submit">Save catalog</button></div>
    </form>
    <h2>Datasets</h2>
    ${table(
      ['Title', 'Slug', 'Visibility', ''],
      datasets.map(
        (d) =>
          html`<tr>
            <td><a href="/dashboard/datasets/${d.id}">${d.title}</a></td>
            <td class="muted">${d.slug}</td>
            <td>${visibility(d.isPublic)}</td>
            <td>
              <form method="post" action="/dashboard/datasets/${d.id}/visibility" class="inline">
                ${csrfInput(csrf)}
                <input type="hidden" name="isPublic" value="${d.isPublic ? 'off' : 'on'}" />
                <button type="submit" class="secondary small">
                  Make ${d.isPublic ? 'private' : 'public'}
                </button>
              </form>
            </td>
          </tr>`,
      ),
      'No datasets yet.',
    )}
    <h2>New dataset</h2>
    <form method="post" action="/dashboard/catalogs/${catalog.id}/datasets" class="card stack">
      ${csrfInput(csrf)} ${describedFields({ isPublic: true })}
      <div><button type="submit">Create dataset</button></div>
    </form>
    <h2>Delete</h2>
    <form method="post" action="/dashboard/catalogs/${catalog.id}/delete" class="card inline">
      ${csrfInput(csrf)}
      <span class="muted"
        >Deleting the catalog deletes its ${datasets.length} dataset(s) and all their events.</span
      >
      <button type="submit" class="danger small">Delete catalog</button>
    </form>`;
}

export function datasetView(csrf: string, dataset: Doc, catalog: Doc | null): Html {
  return html`<p>
      <a href="/dashboard/catalogs/${dataset.catalog as number}">← ${catalog?.title ?? 'Catalog'}</a>
    </p>
    <h1>${dataset.title} ${visibility(dataset.isPublic)}</h1>
    <p class="muted">A dataset is visible to anonymous users only when it and its catalog are both public.</p>
    ${datasetDataLinks(String(dataset.slug))}
    <form method="post" action="/dashboard/datasets/${dataset.id}" class="card stack">
      ${csrfInput(csrf)} ${describedFields(dataset)}
      <div><button type="submit">Save dataset</button></div>
    </form>
    <form method="post" action="/dashboard/datasets/${dataset.id}/delete" class="card inline">
      ${csrfInput(csrf)}
      <span class="muted">Deleting the dataset deletes all its events.</span>
      <button type="submit" class="danger small">Delete dataset</button>
    </form>`;
}
