import type { FastifyPluginAsync } from 'fastify';
import { MAX_SLUG_LENGTH, SLUG_PATTERN } from '../../../domain/collections/slugs.ts';
import { accountPages, hidden } from '../account-pages.ts';
import { type Html, html, trusted } from '../html.ts';
import { pageScript } from '../page-scripts.ts';
import { flashFrom } from '../replies.ts';

// /account/imports/new: the import wizard. The page is the form (catalog and dataset, the file, the
// mapping and settings, validate, start); its script (web/account/import-wizard.js) drives it
// through the API routes only, so what a person does here an API client can do with the same
// requests (docs/ingestion.md, "The import wizard"). Without JavaScript the page says so and points
// there.

const HOME = '/account/imports/new';

const STYLE = trusted(`
.wizard section[data-step] { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:1.25rem 1.5rem; margin-bottom:1.25rem; }
.wizard h2 { margin-top:0; }
.wizard .step-no { display:inline-grid; place-items:center; width:1.7rem; height:1.7rem; border-radius:50%; background:var(--accent); color:#fff; font-size:.9rem; margin-right:.5rem; }
.wizard .bar { display:flex; gap:.75rem; align-items:center; }
.wizard progress { flex:1; height:1rem; }
.wizard .scroll { overflow-x:auto; max-width:100%; }
.wizard .scroll table { font-size:.9em; }
.wizard .mapping { display:grid; grid-template-columns:repeat(auto-fit, minmax(170px, 1fr)); gap:.75rem; }
.wizard select[multiple] { min-height:6rem; }
.wizard .problem { padding:.75rem 1rem; border-radius:8px; background:var(--err-bg); color:var(--err); }
.wizard #valid { color:var(--ok); font-weight:600; }
.wizard #problems, .wizard li[data-consequence=refused] { color:var(--err); }
.wizard li[data-breaking=true], .wizard li[data-consequence=stops] { color:#8d6100; }
.wizard #valid.caution { color:#8d6100; }
.wizard input[type=file] { font:inherit; max-width:100%; }
@media (max-width: 640px) { main { padding:0 .75rem; } .wizard section[data-step] { padding:1rem; } header.top { gap:.5rem; height:auto; flex-wrap:wrap; padding:.5rem; } header.top nav { flex-wrap:wrap; } }
`);

const problemBox = (id: string) => html`<div id="${id}" class="problem" role="alert" hidden></div>`;

const select = (id: string, label: string, options: [string, string][], multiple = false) =>
  html`<label for="${id}"
    >${label}
    <select id="${id}" ${multiple ? trusted('multiple') : ''}>
      ${options.map(([value, text]) => html`<option value="${value}">${text}</option>`)}
    </select></label
  >`;

function importWizardView(): Html {
  return html`<style>
      ${STYLE}
    </style>
    <div class="wizard">
      <h1>Import a file</h1>
      <noscript
        ><div class="flash error">
          The wizard needs JavaScript. Without it, upload with <code>POST /api/ingest-files</code> as
          docs/ingestion.md shows.
        </div></noscript
      >
      <section data-step="2" hidden aria-labelledby="where-heading">
        <h2 id="where-heading"><span class="step-no">1</span>Where the events go, and the file</h2>
        <div class="row">
          ${select('catalog', 'Catalog', [])}
          <div id="new-catalog" hidden>
            <label for="catalog-title"
              >New catalog's title <input type="text" id="catalog-title" maxlength="255"
            /></label>
            <label for="catalog-slug"
              >Slug (in links)
              <input
                type="text"
                id="catalog-slug"
                maxlength="${MAX_SLUG_LENGTH}"
                pattern="${SLUG_PATTERN.source}"
            /></label>
            <label class="check"
              ><input type="checkbox" id="catalog-public" /> Public (anyone can see its events)</label
            >
          </div>
        </div>
        <div class="row">
          ${select('dataset', 'Dataset', [['new', 'New dataset']])}
          <label for="dataset-title" id="new-dataset"
            >New dataset's title (default: the file's name)
            <input type="text" id="dataset-title" maxlength="255"
          /></label>
        </div>
        <label for="file"
          >File (CSV, TSV, Excel .xlsx or OpenDocument .ods)
          <input type="file" id="file" accept=".csv,.tsv,.txt,.xlsx,.ods" required
        /></label>
        <div class="bar">
          <progress id="upload-progress" max="100" value="0" aria-label="Upload progress">0 %</progress>
          <b id="upload-percent">0 %</b>
        </div>
        <p><button type="button" id="upload">Upload and preview</button></p>
        ${problemBox('upload-error')}
      </section>
      <section data-step="3" hidden aria-labelledby="mapping-heading">
        <h2 id="mapping-heading" tabindex="-1">
          <span class="step-no">2</span>Check the columns and the mapping
        </h2>
        <p class="muted">
          <span id="draft-name"></span> is uploaded and waits for you until <span id="draft-expires"></span>;
          nothing is imported before you start it.
        </p>
        <div id="sheet-row" hidden>${select('sheet', 'Sheet of the workbook', [])}</div>
        <p id="sheet-problem" class="muted"></p>
        <h3>Detected columns</h3>
        <div class="scroll"><table id="schema"></table></div>
        <h3>First rows</h3>
        <div class="scroll"><table id="sample"></table></div>
        <h3>Which column is what</h3>
        <div class="mapping">
          ${select('map-timestamp', 'Time', [])} ${select('map-latitude', 'Latitude', [])}
          ${select('map-longitude', 'Longitude', [])}
          ${select('map-coordinates', 'Coordinates ("lat, lon")', [])}
          ${select('map-address', 'Address (one or several columns)', [], true)}
          ${select('map-title', 'Title', [])} ${select('map-id', 'Id', [])}
        </div>
        <h3>Settings</h3>
        <div class="mapping">
          ${select('duplicates', 'Rows already imported', [
            ['skip', 'Skip them'],
            ['update', 'Update them'],
          ])}
          ${select('id-strategy', 'Recognise a row by', [
            ['auto', 'Its id column, else its content'],
            ['external-id', 'Its id column'],
            ['content-hash', 'Its content'],
          ])}
          ${select('schema-mode', 'When the columns change', [
            ['additive', 'Allow new columns (additive)'],
            ['strict', 'Stop on any change (strict)'],
            ['flexible', 'Allow any change (flexible)'],
          ])}
          <label class="check"
            ><input type="checkbox" id="geocoding" checked /> Find coordinates for addresses</label
          >
        </div>
        <p class="actions">
          <button type="button" id="validate" class="secondary">Validate</button>
          <button type="button" id="start">Start the import</button>
        </p>
        <div id="validation" hidden aria-live="polite">
          <p id="valid" hidden>The mapping fits the file: ready to start.</p>
          <div id="invalid" hidden>
            <p><b>Fix these first:</b></p>
            <ul id="problems"></ul>
          </div>
          <div id="drift" hidden>
            <p><b>The columns differ from the dataset's:</b></p>
            <ul id="drift-list"></ul>
          </div>
          <div id="quota" hidden>
            <p><b>Your limits for this file:</b></p>
            <ul id="quota-list"></ul>
          </div>
        </div>
        ${problemBox('settings-error')}
      </section>
      <section data-step="4" hidden aria-labelledby="started-heading">
        <h2 id="started-heading" tabindex="-1"><span class="step-no">3</span>Import started</h2>
        <p><b id="started-name"></b> is being imported.</p>
        <p class="actions">
          <a id="started-link" href="/account/imports">Follow it in My imports</a>
          <a id="explore-link" href="/">See the events on the map</a>
        </p>
      </section>
    </div>
    ${pageScript('import-wizard.js')}`;
}

export const importWizardPage: FastifyPluginAsync<{ csrfSecret: string }> = async (app, deps) => {
  const pages = accountPages(app, deps.csrfSecret, HOME);
  app.get(HOME, hidden, async (request, reply) => {
    const user = pages.user(request, reply, HOME);
    if (!user) return reply;
    const token = pages.csrf.token(request, reply);
    return pages.render(reply, 200, 'Import a file', importWizardView(), {
      user,
      token,
      flash: flashFrom(request),
      scripts: true,
    });
  });
};
