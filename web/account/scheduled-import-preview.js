// Progressive enhancement of the scheduled imports' create form (/account/scheduled-imports):
// "Preview the file" asks POST /api/ingest/preview-url (the SSRF guard's fetch) for the file's
// columns, offers them for the time column and fills in the detected one. Without JavaScript the
// button stays hidden and the form works as it is.

/** @typedef {{ name: string, type: string }} Field */
/** @typedef {{ fileName: string, sheets: { fields: Field[], mapping: { timestamp?: string } }[] }} UrlPreview */

/**
 * @param {HTMLFormElement} form
 * @param {string} name
 * @returns {HTMLInputElement}
 */
function field(form, name) {
  const input = form.elements.namedItem(name);
  if (!(input instanceof HTMLInputElement)) throw new Error(`the form has no input ${name}`);
  return input;
}

/** @param {HTMLFormElement} form */
function enhance(form) {
  const button = /** @type {HTMLButtonElement} */ (form.querySelector('#preview-url'));
  const out = /** @type {HTMLElement} */ (form.querySelector('#url-preview'));
  const columns = /** @type {HTMLDataListElement} */ (form.querySelector('#url-columns'));
  const time = field(form, 'mapping.timestamp');
  button.hidden = false;
  button.addEventListener('click', async () => {
    out.hidden = false;
    out.className = 'muted';
    out.textContent = 'Fetching the file…';
    try {
      const response = await fetch('/api/ingest/preview-url', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ url: field(form, 'url').value.trim() }),
      });
      const body = await response.json();
      if (!response.ok) {
        out.className = 'flash error';
        out.textContent = (body.code ? body.code + ': ' : '') + (body.message || 'the preview failed');
        return;
      }
      /** @type {UrlPreview} */
      const preview = body;
      const sheet = preview.sheets[0];
      if (!sheet) throw new Error('the file has no sheet');
      out.className = 'preview';
      out.textContent =
        preview.fileName + ': ' + sheet.fields.map((f) => f.name + ' (' + f.type + ')').join(', ');
      columns.replaceChildren(
        ...sheet.fields.map((f) => Object.assign(document.createElement('option'), { value: f.name })),
      );
      if (sheet.mapping.timestamp && !time.value) time.value = sheet.mapping.timestamp;
    } catch (error) {
      out.className = 'flash error';
      out.textContent = 'The preview failed: ' + (error instanceof Error ? error.message : String(error));
    }
  });
}

const form = document.querySelector('form[data-schedule-create]');
if (form instanceof HTMLFormElement) enhance(form);
