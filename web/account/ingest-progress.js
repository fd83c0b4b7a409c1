// The live progress of the import pages (/dashboard/ingest, /account/imports): polls
// GET /api/ingest/{id}/progress for every file still running and updates its numbers in place; stops
// when all have settled, or reloads a page marked data-reload-when-settled, whose actions depend on
// the outcome. Which statuses are settled comes from the server, in #ingest-progress-settings.

/**
 * @typedef {{ progress: number, status: string, state: string, name: string,
 *   rows: { processed: number, total: number }, batches: { current: number, total: number },
 *   performance: { rowsPerSecond: number | null } }} Stage
 */
/** @typedef {{ id: number, currentStage: string, stages: Stage[] }} Job */
/** @typedef {{ status: string, overallProgress: number, estimatedCompletionTime: string | null, jobs: Job[] }} Progress */

const settingsBlock = document.getElementById('ingest-progress-settings');
/** @type {{ settled: string[] }} */
const { settled } = JSON.parse(settingsBlock?.textContent ?? '{"settled":[]}');

/** @param {string | null} iso */
function eta(iso) {
  if (!iso) return '–';
  const seconds = Math.max(0, Math.round((Date.parse(iso) - Date.now()) / 1000));
  return seconds < 90 ? seconds + ' s' : Math.round(seconds / 60) + ' min';
}

/** @param {number | null | undefined} value */
const rate = (value) =>
  value === null || value === undefined ? '–' : value.toLocaleString('en') + ' rows/s';

// The same texts as the server's page (src/adapters/pages/ingest/ingest-progress.ts).
/** @param {{ processed: number, total: number }} rows */
const rowsText = (rows) =>
  rows.total ? rows.processed.toLocaleString('en') + ' / ' + rows.total.toLocaleString('en') : '–';
/** @param {{ current: number, total: number }} batches */
const batchesText = (batches) => (batches.total ? batches.current + ' / ' + batches.total : '–');

/** @param {ParentNode} root @param {string} selector @param {string} text */
function set(root, selector, text) {
  const node = root.querySelector(selector);
  if (node) node.textContent = text;
}

/** @param {Element | null} node @param {string} status */
function badge(node, status) {
  if (!node) return;
  node.textContent = status.replace('_', ' ');
  node.className = 'badge ' + status;
}

/** @param {ParentNode} root @param {string} selector @param {number} value */
function setBar(root, selector, value) {
  const bar = root.querySelector(selector);
  if (bar instanceof HTMLProgressElement) bar.value = value;
}

/**
 * Updates one file's section from its progress; true once the file has settled.
 * @param {HTMLElement} section
 */
async function poll(section) {
  const id = section.dataset.fileId;
  const response = await fetch('/api/ingest/' + id + '/progress', {
    headers: { accept: 'application/json' },
  });
  if (!response.ok) return false;
  /** @type {Progress} */
  const progress = await response.json();
  badge(section.querySelector('[data-field=status]'), progress.status);
  setBar(section, 'progress[data-field=overall]', progress.overallProgress);
  set(section, '[data-field=overall-text]', progress.overallProgress + ' %');
  set(section, '[data-field=eta]', eta(progress.estimatedCompletionTime));
  for (const job of progress.jobs) {
    const root = section.querySelector('[data-job-id="' + job.id + '"]');
    if (!root) continue;
    set(root, '[data-field=current-stage]', job.currentStage);
    for (const stage of job.stages) {
      const row = root.querySelector('[data-stage="' + stage.name + '"]');
      if (!row) continue;
      // state, not the spec's status: it says failed and waiting where status cannot.
      badge(row.querySelector('[data-field=stage-status]'), stage.state);
      setBar(row, 'progress[data-field=stage]', stage.progress);
      set(row, '[data-field=stage-text]', stage.progress + ' %');
      set(row, '[data-field=rows]', rowsText(stage.rows));
      set(row, '[data-field=batches]', batchesText(stage.batches));
      set(row, '[data-field=rows-per-second]', rate(stage.performance.rowsPerSecond));
    }
  }
  section.dataset.status = progress.status;
  return settled.includes(progress.status);
}

async function tick() {
  /** @type {HTMLElement[]} */
  const sections = [...document.querySelectorAll('section.ingest-file')].filter(
    (s) => s instanceof HTMLElement,
  );
  const running = sections.filter((s) => !settled.includes(s.dataset.status ?? ''));
  if (running.length === 0) return;
  const done = await Promise.all(running.map((s) => poll(s).catch(() => false)));
  // A page with actions per state (My imports) renders them anew once a file settles.
  if (done.some(Boolean) && document.querySelector('[data-reload-when-settled]')) return location.reload();
  setTimeout(tick, 1000);
}

setTimeout(tick, 1000);
