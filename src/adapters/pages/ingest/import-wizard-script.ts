// The import wizard's client (runs in the browser, allowed by the page's CSP by its hash). It talks
// only to the documented API, as any API client could: GET /api/catalogs/with-datasets, POST
// /api/catalogs, POST /api/ingest-files with start=false (by XHR, for its upload progress), POST
// /api/ingest/validate-preview and POST /api/ingest/configure. Every API error is shown on the page
// with its message and code; nothing is retried behind the user's back.

export const WIZARD_SCRIPT = `
(() => {
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') node.textContent = v; else if (v !== false && v != null) node.setAttribute(k, v === true ? '' : v);
    }
    for (const child of children) if (child != null) node.append(child);
    return node;
  };
  const KEYS = ['timestamp', 'latitude', 'longitude', 'coordinates', 'address', 'title', 'id'];
  const state = { catalogs: [], draft: null, preview: null, sheet: 0 };

  const show = (step) => {
    for (const section of document.querySelectorAll('[data-step]')) {
      const on = Number(section.dataset.step) <= step;
      section.hidden = !on;
    }
    document.body.dataset.wizardStep = String(step);
  };
  const problem = (where, error) => {
    const box = $(where);
    box.replaceChildren();
    if (!error) { box.hidden = true; return; }
    box.hidden = false;
    box.append(el('b', { text: error.code ? error.code + ': ' : '' }), error.message || error.error || 'request failed');
    const details = Array.isArray(error.details) ? error.details : [];
    if (details.length) box.append(el('ul', {}, ...details.map((d) => el('li', { text: d.message || JSON.stringify(d) }))));
  };
  async function api(method, url, body) {
    const response = await fetch(url, {
      method,
      headers: body ? { 'content-type': 'application/json', accept: 'application/json' } : { accept: 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
      credentials: 'same-origin',
    });
    const json = await response.json().catch(() => ({ message: 'the server answered ' + response.status }));
    if (!response.ok) throw Object.assign(new Error(json.message || 'request failed'), { body: json, status: response.status });
    return json;
  }

  // Step 1: where the events go.
  function fillCatalogs(selected) {
    const select = $('#catalog');
    select.replaceChildren(
      ...state.catalogs.map((c) => el('option', { value: String(c.id), text: c.title + ' (' + c.slug + ')', selected: String(c.id) === String(selected) })),
      el('option', { value: 'new', text: 'New catalog…', selected: selected === 'new' || state.catalogs.length === 0 }),
    );
    fillDatasets();
  }
  function fillDatasets() {
    const catalogId = $('#catalog').value;
    $('#new-catalog').hidden = catalogId !== 'new';
    const catalog = state.catalogs.find((c) => String(c.id) === catalogId);
    $('#dataset').replaceChildren(
      el('option', { value: 'new', text: 'New dataset' }),
      ...(catalog ? catalog.datasets.map((d) => el('option', { value: String(d.id), text: d.title + ' (' + d.slug + ')' })) : []),
    );
    $('#new-dataset').hidden = false;
  }
  const slugOf = (title) => title.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  async function loadCatalogs(selected) {
    const answer = await api('GET', '/api/catalogs/with-datasets');
    state.catalogs = answer.docs;
    fillCatalogs(selected ?? (state.catalogs[0] ? state.catalogs[0].id : 'new'));
  }
  async function catalogId() {
    const chosen = $('#catalog').value;
    if (chosen !== 'new') return Number(chosen);
    const title = $('#catalog-title').value.trim();
    if (!title) throw Object.assign(new Error('Give the new catalog a title'), { body: { code: 'CATALOG_TITLE_MISSING', message: 'Give the new catalog a title' } });
    const created = await api('POST', '/api/catalogs', { title, slug: $('#catalog-slug').value.trim() || slugOf(title), isPublic: $('#catalog-public').checked });
    await loadCatalogs(created.doc.id);
    return created.doc.id;
  }
  function datasetTarget() {
    const chosen = $('#dataset').value;
    if (chosen !== 'new') return Number(chosen);
    const title = $('#dataset-title').value.trim();
    return title ? { newDataset: { title } } : 'new';
  }

  // Step 2: the upload, with its progress.
  function upload(catalog) {
    return new Promise((resolve, reject) => {
      const file = $('#file').files[0];
      if (!file) return reject(Object.assign(new Error('Choose a file'), { body: { code: 'FILE_MISSING', message: 'Choose a file to upload' } }));
      const form = new FormData();
      form.append('catalog', String(catalog));
      form.append('start', 'false');
      const target = datasetTarget();
      if (typeof target === 'number') form.append('dataset', String(target));
      form.append('file', file);
      const xhr = new XMLHttpRequest();
      const bar = $('#upload-progress');
      xhr.upload.onprogress = (event) => {
        if (!event.lengthComputable) return;
        const percent = Math.round((event.loaded / event.total) * 100);
        bar.value = percent;
        $('#upload-percent').textContent = percent + ' %';
      };
      xhr.onload = () => {
        let body = {};
        try { body = JSON.parse(xhr.responseText); } catch { body = { message: 'the server answered ' + xhr.status }; }
        if (xhr.status === 201) { bar.value = 100; $('#upload-percent').textContent = '100 %'; resolve(body); }
        else reject(Object.assign(new Error(body.message || 'upload failed'), { body, status: xhr.status }));
      };
      xhr.onerror = () => reject(Object.assign(new Error('network error'), { body: { message: 'The upload was interrupted (network error)' } }));
      xhr.open('POST', '/api/ingest-files');
      xhr.setRequestHeader('accept', 'application/json');
      xhr.send(form);
    });
  }

  // Step 3: the detected schema, the first rows and the mapping.
  function columns() {
    const sheet = state.preview && state.preview.sheets[state.sheet];
    return sheet ? sheet.fields.map((f) => f.name) : [];
  }
  function renderPreview(keepMapping) {
    const sheets = state.preview.sheets;
    const sheetSelect = $('#sheet');
    sheetSelect.replaceChildren(...sheets.map((s) => el('option', { value: String(s.index), text: (s.name || 'Sheet ' + (s.index + 1)) + ' (' + s.fields.length + ' columns)', selected: s.index === state.sheet })));
    $('#sheet-row').hidden = sheets.length < 2;
    const sheet = sheets[state.sheet] || sheets[0];
    $('#schema').replaceChildren(
      el('thead', {}, el('tr', {}, el('th', { text: 'Column' }), el('th', { text: 'Type' }), el('th', { text: 'Empty values' }))),
      el('tbody', {}, ...sheet.fields.map((f) => el('tr', {}, el('td', { text: f.name }), el('td', { text: f.type }), el('td', { text: f.nullable ? 'yes' : 'no' })))),
    );
    const header = sheet.sample[0] || sheet.fields.map((f) => f.name);
    $('#sample').replaceChildren(
      el('thead', {}, el('tr', {}, ...header.map((h) => el('th', { text: h })))),
      el('tbody', {}, ...sheet.sample.slice(1).map((row) => el('tr', {}, ...row.map((v) => el('td', { text: v }))))),
    );
    $('#sheet-problem').textContent = sheet.problem || '';
    for (const key of KEYS) {
      const select = $('#map-' + key);
      const before = keepMapping ? [...select.selectedOptions].map((o) => o.value) : [];
      const detected = sheet.mapping[key];
      const wanted = before.length ? before : Array.isArray(detected) ? detected : detected ? [detected] : [];
      select.replaceChildren(
        ...(select.multiple ? [] : [el('option', { value: '', text: '(none)' })]),
        ...columns().map((c) => el('option', { value: c, text: c, selected: wanted.includes(c) })),
      );
    }
  }
  function settings() {
    const fieldMapping = {};
    for (const key of KEYS) {
      const values = [...$('#map-' + key).selectedOptions].map((o) => o.value).filter(Boolean);
      if (values.length === 1) fieldMapping[key] = values[0];
      else if (values.length > 1) fieldMapping[key] = values;
    }
    const out = {
      fieldMapping,
      duplicateHandling: $('#duplicates').value,
      geocoding: $('#geocoding').checked,
      schemaMode: $('#schema-mode').value,
      idStrategy: $('#id-strategy').value,
    };
    if (state.preview && state.preview.sheets.length > 1) {
      out.sheets = state.preview.sheets.map((s) => ({ sheetIndex: s.index, dataset: s.index === 0 ? datasetTarget() : 'new' }));
    }
    return out;
  }
  function renderProblems(answer) {
    const list = $('#problems');
    list.replaceChildren(...answer.problems.map((p) => el('li', { 'data-code': p.code }, el('b', { text: p.code + ' ' }), p.message)));
    $('#validation').hidden = false;
    $('#valid').hidden = !answer.valid;
    $('#invalid').hidden = answer.valid;
    $('#start').disabled = !answer.valid;
  }

  async function step(button, where, work) {
    problem(where, null);
    button.disabled = true;
    try { await work(); } catch (error) { problem(where, error.body || { message: error.message }); }
    finally { button.disabled = false; }
  }

  $('#catalog').addEventListener('change', fillDatasets);
  $('#catalog-title').addEventListener('input', () => { $('#catalog-slug').placeholder = slugOf($('#catalog-title').value); });
  $('#upload').addEventListener('click', (event) => step(event.currentTarget, '#upload-error', async () => {
    const catalog = await catalogId();
    const answer = await upload(catalog);
    state.draft = answer.draft;
    $('#draft-name').textContent = answer.draft.originalName;
    $('#draft-expires').textContent = answer.draft.expiresAt.replace('T', ' ').slice(0, 16) + ' UTC';
    const checked = await api('POST', '/api/ingest/validate-preview', { draft: state.draft.id });
    state.preview = checked;
    state.sheet = 0;
    renderPreview(false);
    $('#validation').hidden = true;
    show(3);
    $('#mapping-heading').focus();
  }));
  $('#sheet').addEventListener('change', () => { state.sheet = Number($('#sheet').value); renderPreview(false); });
  $('#validate').addEventListener('click', (event) => step(event.currentTarget, '#settings-error', async () => {
    const answer = await api('POST', '/api/ingest/validate-preview', { draft: state.draft.id, settings: settings(), dataset: datasetTarget() });
    state.preview = answer;
    renderPreview(true);
    renderProblems(answer);
  }));
  $('#start').addEventListener('click', (event) => step(event.currentTarget, '#settings-error', async () => {
    const answer = await api('POST', '/api/ingest/configure', { draft: state.draft.id, settings: settings(), dataset: datasetTarget(), start: true });
    const doc = answer.doc;
    $('#started-name').textContent = doc.originalName;
    // Explore filters by slugs: the new dataset's readable slug comes from the catalogs list.
    await loadCatalogs(doc.catalog);
    const catalog = state.catalogs.find((c) => c.id === doc.catalog);
    const slugs = catalog ? catalog.datasets.filter((d) => doc.datasets.includes(d.id)).map((d) => d.slug) : [];
    $('#explore-link').href = '/?' + new URLSearchParams(catalog ? { catalog: catalog.slug, datasets: slugs.join(',') } : {}).toString().replaceAll('%2C', ',');
    document.body.dataset.ingestFile = String(doc.id);
    show(4);
    $('#started-heading').focus();
  }));

  show(2);
  loadCatalogs().catch((error) => problem('#upload-error', error.body || { message: error.message }));
})();
`;
