// The import wizard's client (/account/imports/new). It talks only to the documented API, as any API
// client could: GET /api/catalogs/with-datasets, POST /api/catalogs, POST /api/ingest-files with
// start=false (by XHR, for its upload progress), POST /api/ingest/validate-preview and POST
// /api/ingest/configure. Every API error is shown on the page with its message and code; nothing is
// retried behind the user's back.

/**
 * An API error body (the spec's `{error, message?, details?, code?}`), or the page's own complaint.
 * @typedef {{ error?: string, message?: string, code?: string, details?: unknown }} Problem
 * @typedef {{ id: number, slug: string, title: string }} Dataset
 * @typedef {Dataset & { datasets: Dataset[] }} Catalog
 * @typedef {{ name: string, type: string, nullable: boolean }} Field
 * @typedef {{ index: number, name?: string, fields: Field[], sample: string[][],
 *   mapping: Record<string, string | string[] | undefined>, problem?: string }} Sheet
 * @typedef {{ sheetIndex: number, datasetId: number, version: number, added: string[], removed: string[],
 *   changed: { name: string, from: string, to: string }[], breaking: boolean }} Drift
 * @typedef {{ quota: string, consequence: 'fits' | 'refused' | 'stops', message: string }} Verdict
 * @typedef {{ sheets: Sheet[], problems: { code: string, message: string }[], valid: boolean,
 *   drift?: Drift[], allowance?: { allowed: boolean, verdicts: Verdict[] } | null }} Preview
 * @typedef {{ id: number, originalName: string, expiresAt: string }} Draft
 * @typedef {number | 'new' | { newDataset: { title: string } }} DatasetTarget
 */

/** A request the API (or the page) refused, with the body to show. */
class Refusal extends Error {
  /** @param {Problem} body @param {number} [status] */
  constructor(body, status) {
    super(body.message || 'request failed');
    this.body = body;
    this.status = status;
  }
}

/**
 * The element with this id, of the kind the page renders there.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T, prototype: T }} kind
 * @returns {T}
 */
function byId(id, kind) {
  const node = document.getElementById(id);
  if (!(node instanceof kind)) throw new Error(`the page has no ${kind.name} #${id}`);
  return node;
}
/** @param {string} id */
const box = (id) => byId(id, HTMLElement);
/** @param {string} id */
const input = (id) => byId(id, HTMLInputElement);
/** @param {string} id */
const select = (id) => byId(id, HTMLSelectElement);
/** @param {string} id */
const button = (id) => byId(id, HTMLButtonElement);

/**
 * A new element: `text` sets its text, `true` an empty attribute, false or null none.
 * @param {string} tag
 * @param {Record<string, string | boolean | null | undefined>} [attributes]
 * @param {(Node | string | null | undefined)[]} children
 */
function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === 'text') node.textContent = String(value);
    else if (typeof value === 'string' || value === true)
      node.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

const KEYS = ['timestamp', 'latitude', 'longitude', 'coordinates', 'address', 'title', 'id'];
/** @type {{ catalogs: Catalog[], draft: Draft | null, preview: Preview | null, sheet: number }} */
const state = { catalogs: [], draft: null, preview: null, sheet: 0 };

/** The steps up to `step` are shown, the later ones hidden. @param {number} step */
function show(step) {
  for (const section of document.querySelectorAll('[data-step]')) {
    if (section instanceof HTMLElement) section.hidden = !(Number(section.dataset.step) <= step);
  }
  document.body.dataset.wizardStep = String(step);
}

/** Shows `error` in the problem box `where`, or empties and hides it. @param {string} where @param {Problem | null} error */
function problem(where, error) {
  const target = box(where);
  target.replaceChildren();
  if (!error) {
    target.hidden = true;
    return;
  }
  target.hidden = false;
  target.append(
    el('b', { text: error.code ? error.code + ': ' : '' }),
    error.message || error.error || 'request failed',
  );
  const details = Array.isArray(error.details) ? error.details : [];
  if (details.length)
    target.append(
      el('ul', {}, ...details.map((detail) => el('li', { text: detail.message || JSON.stringify(detail) }))),
    );
}

/** @param {unknown} error @returns {Problem} */
const problemOf = (error) =>
  error instanceof Refusal ? error.body : { message: error instanceof Error ? error.message : String(error) };

/**
 * A JSON request to the API with the session's cookie.
 * @param {string} method @param {string} url @param {object} [body]
 * @returns {Promise<any>}
 */
async function api(method, url, body) {
  const response = await fetch(url, {
    method,
    headers: body
      ? { 'content-type': 'application/json', accept: 'application/json' }
      : { accept: 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
    credentials: 'same-origin',
  });
  const json = await response.json().catch(() => ({ message: 'the server answered ' + response.status }));
  if (!response.ok) throw new Refusal(json, response.status);
  return json;
}

// Step 1: where the events go.

/** @param {number | string} selected a catalog id or 'new' */
function fillCatalogs(selected) {
  select('catalog').replaceChildren(
    ...state.catalogs.map((c) =>
      el('option', {
        value: String(c.id),
        text: c.title + ' (' + c.slug + ')',
        selected: String(c.id) === String(selected),
      }),
    ),
    el('option', {
      value: 'new',
      text: 'New catalog…',
      selected: selected === 'new' || state.catalogs.length === 0,
    }),
  );
  fillDatasets();
}

function fillDatasets() {
  const catalogId = select('catalog').value;
  box('new-catalog').hidden = catalogId !== 'new';
  const catalog = state.catalogs.find((c) => String(c.id) === catalogId);
  select('dataset').replaceChildren(
    el('option', { value: 'new', text: 'New dataset' }),
    ...(catalog
      ? catalog.datasets.map((d) =>
          el('option', { value: String(d.id), text: d.title + ' (' + d.slug + ')' }),
        )
      : []),
  );
  box('new-dataset').hidden = false;
}

/** @param {string} title */
const slugOf = (title) =>
  title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);

/** @param {number | string} [selected] */
async function loadCatalogs(selected) {
  const answer = await api('GET', '/api/catalogs/with-datasets');
  state.catalogs = answer.docs;
  fillCatalogs(selected ?? (state.catalogs[0] ? state.catalogs[0].id : 'new'));
}

/** The chosen catalog's id, after creating it when it is a new one. @returns {Promise<number>} */
async function catalogId() {
  const chosen = select('catalog').value;
  if (chosen !== 'new') return Number(chosen);
  const title = input('catalog-title').value.trim();
  if (!title) throw new Refusal({ code: 'CATALOG_TITLE_MISSING', message: 'Give the new catalog a title' });
  const created = await api('POST', '/api/catalogs', {
    title,
    slug: input('catalog-slug').value.trim() || slugOf(title),
    isPublic: input('catalog-public').checked,
  });
  await loadCatalogs(created.doc.id);
  return created.doc.id;
}

/** @returns {DatasetTarget} */
function datasetTarget() {
  const chosen = select('dataset').value;
  if (chosen !== 'new') return Number(chosen);
  const title = input('dataset-title').value.trim();
  return title ? { newDataset: { title } } : 'new';
}

// Step 2: the upload, with its progress.

/** @param {number} catalog @returns {Promise<{ draft: Draft }>} */
function upload(catalog) {
  return new Promise((resolve, reject) => {
    const file = input('file').files?.[0];
    if (!file) return reject(new Refusal({ code: 'FILE_MISSING', message: 'Choose a file to upload' }));
    const form = new FormData();
    form.append('catalog', String(catalog));
    form.append('start', 'false');
    const target = datasetTarget();
    if (typeof target === 'number') form.append('dataset', String(target));
    form.append('file', file);
    const xhr = new XMLHttpRequest();
    const bar = byId('upload-progress', HTMLProgressElement);
    const percent = box('upload-percent');
    xhr.upload.onprogress = (event) => {
      if (!event.lengthComputable) return;
      const done = Math.round((event.loaded / event.total) * 100);
      bar.value = done;
      percent.textContent = done + ' %';
    };
    xhr.onload = () => {
      let body = {};
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        body = { message: 'the server answered ' + xhr.status };
      }
      if (xhr.status === 201) {
        bar.value = 100;
        percent.textContent = '100 %';
        resolve(/** @type {{ draft: Draft }} */ (body));
      } else reject(new Refusal(body, xhr.status));
    };
    xhr.onerror = () => reject(new Refusal({ message: 'The upload was interrupted (network error)' }));
    xhr.open('POST', '/api/ingest-files');
    xhr.setRequestHeader('accept', 'application/json');
    xhr.send(form);
  });
}

// Step 3: the detected schema, the first rows and the mapping.

/** @returns {Preview} */
function preview() {
  if (!state.preview) throw new Error('no file checked yet');
  return state.preview;
}

/** @returns {Draft} */
function draft() {
  if (!state.draft) throw new Error('no file uploaded yet');
  return state.draft;
}

/** @param {boolean} keepMapping keep what the selects say instead of the detected mapping */
function renderPreview(keepMapping) {
  const sheets = preview().sheets;
  select('sheet').replaceChildren(
    ...sheets.map((s) =>
      el('option', {
        value: String(s.index),
        text: (s.name || 'Sheet ' + (s.index + 1)) + ' (' + s.fields.length + ' columns)',
        selected: s.index === state.sheet,
      }),
    ),
  );
  box('sheet-row').hidden = sheets.length < 2;
  const sheet = /** @type {Sheet} */ (sheets[state.sheet] || sheets[0]);
  box('schema').replaceChildren(
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { text: 'Column' }),
        el('th', { text: 'Type' }),
        el('th', { text: 'Empty values' }),
      ),
    ),
    el(
      'tbody',
      {},
      ...sheet.fields.map((f) =>
        el(
          'tr',
          {},
          el('td', { text: f.name }),
          el('td', { text: f.type }),
          el('td', { text: f.nullable ? 'yes' : 'no' }),
        ),
      ),
    ),
  );
  const header = sheet.sample[0] || sheet.fields.map((f) => f.name);
  box('sample').replaceChildren(
    el('thead', {}, el('tr', {}, ...header.map((h) => el('th', { text: h })))),
    el(
      'tbody',
      {},
      ...sheet.sample.slice(1).map((row) => el('tr', {}, ...row.map((value) => el('td', { text: value })))),
    ),
  );
  box('sheet-problem').textContent = sheet.problem || '';
  const columns = (state.preview?.sheets[state.sheet]?.fields ?? []).map((f) => f.name);
  for (const key of KEYS) {
    const choice = select('map-' + key);
    const before = keepMapping ? [...choice.selectedOptions].map((o) => o.value) : [];
    const detected = sheet.mapping[key];
    const wanted = before.length ? before : Array.isArray(detected) ? detected : detected ? [detected] : [];
    choice.replaceChildren(
      ...(choice.multiple ? [] : [el('option', { value: '', text: '(none)' })]),
      ...columns.map((c) => el('option', { value: c, text: c, selected: wanted.includes(c) })),
    );
  }
}

/** The mapping and settings as the API takes them. */
function settings() {
  /** @type {Record<string, string | string[]>} */
  const fieldMapping = {};
  for (const key of KEYS) {
    const values = [...select('map-' + key).selectedOptions].map((o) => o.value).filter(Boolean);
    if (values.length === 1) fieldMapping[key] = /** @type {string} */ (values[0]);
    else if (values.length > 1) fieldMapping[key] = values;
  }
  /** @type {Record<string, unknown>} */
  const out = {
    fieldMapping,
    duplicateHandling: select('duplicates').value,
    geocoding: input('geocoding').checked,
    schemaMode: select('schema-mode').value,
    idStrategy: select('id-strategy').value,
  };
  if (state.preview && state.preview.sheets.length > 1) {
    out.sheets = state.preview.sheets.map((s) => ({
      sheetIndex: s.index,
      dataset: s.index === 0 ? datasetTarget() : 'new',
    }));
  }
  return out;
}

/** What Validate checks and Start starts: the upload with the page's mapping, settings and dataset. */
const uploadSettings = () => ({ draft: draft().id, settings: settings(), dataset: datasetTarget() });

/** One sheet's drift as a person reads it. @param {Drift} drift */
function driftItem(drift) {
  const parts = [
    drift.added.length ? 'added ' + drift.added.join(', ') : '',
    drift.removed.length ? 'removed ' + drift.removed.join(', ') : '',
    drift.changed.length
      ? 'retyped ' + drift.changed.map((c) => c.name + ' ' + c.from + ' → ' + c.to).join(', ')
      : '',
  ].filter(Boolean);
  const sheet = (state.preview?.sheets.length ?? 1) > 1 ? 'Sheet ' + (drift.sheetIndex + 1) + ': ' : '';
  const outcome = drift.breaking
    ? ' The import will stop at "Validate schema" until you approve the change in My imports.'
    : ' The dataset gets a new schema version; the import goes on.';
  return el(
    'li',
    { 'data-breaking': String(drift.breaking) },
    sheet + parts.join('; ') + ' (against schema version ' + drift.version + ').' + outcome,
  );
}

/** @param {Preview} answer */
function renderProblems(answer) {
  box('problems').replaceChildren(
    ...answer.problems.map((p) =>
      el('li', { 'data-code': p.code }, el('b', { text: p.code + ' ' }), p.message),
    ),
  );
  const drift = answer.drift ?? [];
  box('drift-list').replaceChildren(...drift.map(driftItem));
  box('drift').hidden = drift.length === 0;
  const verdicts = answer.allowance?.verdicts ?? [];
  box('quota-list').replaceChildren(
    ...verdicts.map((v) =>
      el('li', { 'data-quota': v.quota, 'data-consequence': v.consequence, text: v.message }),
    ),
  );
  box('quota').hidden = verdicts.length === 0;
  // "Ready to start" only when nothing will stop it: a quota that refuses the start keeps Start
  // disabled; a breaking drift or a limit the import would stop at is said instead.
  const allowed = answer.allowance?.allowed !== false;
  const caution = drift.some((d) => d.breaking) || verdicts.some((v) => v.consequence === 'stops');
  const valid = box('valid');
  valid.textContent = !allowed
    ? 'The mapping fits the file, but your limits refuse the start: see below.'
    : caution
      ? 'The mapping fits the file; read what will happen below before you start.'
      : 'The mapping fits the file: ready to start.';
  valid.classList.toggle('caution', caution || !allowed);
  box('validation').hidden = false;
  valid.hidden = !answer.valid;
  box('invalid').hidden = answer.valid;
  button('start').disabled = !answer.valid || !allowed;
}

/**
 * One step's work behind its button: the button is disabled meanwhile and a refusal lands in `where`.
 * @param {Event} event @param {string} where @param {() => Promise<void>} work
 */
async function step(event, where, work) {
  const pressed = /** @type {HTMLButtonElement} */ (event.currentTarget);
  problem(where, null);
  pressed.disabled = true;
  try {
    await work();
  } catch (error) {
    problem(where, problemOf(error));
  } finally {
    pressed.disabled = false;
  }
}

select('catalog').addEventListener('change', fillDatasets);
input('catalog-title').addEventListener('input', () => {
  input('catalog-slug').placeholder = slugOf(input('catalog-title').value);
});
button('upload').addEventListener('click', (event) =>
  step(event, 'upload-error', async () => {
    const catalog = await catalogId();
    const answer = await upload(catalog);
    state.draft = answer.draft;
    box('draft-name').textContent = answer.draft.originalName;
    box('draft-expires').textContent = answer.draft.expiresAt.replace('T', ' ').slice(0, 16) + ' UTC';
    state.preview = await api('POST', '/api/ingest/validate-preview', { draft: answer.draft.id });
    state.sheet = 0;
    renderPreview(false);
    box('validation').hidden = true;
    show(3);
    box('mapping-heading').focus();
  }),
);
select('sheet').addEventListener('change', () => {
  state.sheet = Number(select('sheet').value);
  renderPreview(false);
});
button('validate').addEventListener('click', (event) =>
  step(event, 'settings-error', async () => {
    const answer = await api('POST', '/api/ingest/validate-preview', uploadSettings());
    state.preview = answer;
    renderPreview(true);
    renderProblems(answer);
  }),
);
button('start').addEventListener('click', (event) =>
  step(event, 'settings-error', async () => {
    const answer = await api('POST', '/api/ingest/configure', { ...uploadSettings(), start: true });
    /** @type {{ id: number, originalName: string, catalog: number, datasets: number[] }} */
    const doc = answer.doc;
    box('started-name').textContent = doc.originalName;
    // Explore filters by slugs: the new dataset's readable slug comes from the catalogs list.
    await loadCatalogs(doc.catalog);
    const catalog = state.catalogs.find((c) => c.id === doc.catalog);
    const slugs = catalog
      ? catalog.datasets.filter((d) => doc.datasets.includes(d.id)).map((d) => d.slug)
      : [];
    /** @type {Record<string, string>} */
    const filter = catalog ? { catalog: catalog.slug, datasets: slugs.join(',') } : {};
    byId('explore-link', HTMLAnchorElement).href =
      '/?' + new URLSearchParams(filter).toString().replaceAll('%2C', ',');
    document.body.dataset.ingestFile = String(doc.id);
    show(4);
    box('started-heading').focus();
  }),
);

show(2);
loadCatalogs().catch((error) => problem('upload-error', problemOf(error)));
