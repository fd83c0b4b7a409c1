// The catalog select and the dataset check boxes of the Explore page, drawn from
// /api/v1/data-sources' catalogs and the page's state.
import { element, formatCount } from './format.js';

const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {any[]} catalogs /api/v1/data-sources' catalogs
 * @param {{ catalog: string, datasets: string[] }} state the page's state (its datasets are set here)
 * @param {() => void} filtersChanged called when the ticked datasets change
 */
export function drawFilterControls(catalogs, state, filtersChanged) {
  const select = /** @type {HTMLSelectElement} */ (byId('catalog'));
  select.replaceChildren(
    element('option', { value: '' }, ['All catalogs']),
    ...catalogs.map((catalog) =>
      element('option', { value: catalog.slug }, [`${catalog.title} (${formatCount(catalog.eventCount)})`]),
    ),
  );
  select.value = state.catalog;
  const box = byId('datasets');
  const shown = catalogs.filter((catalog) => !state.catalog || catalog.slug === state.catalog);
  const items = shown.flatMap((catalog) =>
    catalog.datasets.map((/** @type {any} */ dataset) => {
      const input = element('input', {
        type: 'checkbox',
        id: `dataset-${dataset.slug}`,
        value: dataset.slug,
      });
      input.checked = state.datasets.includes(dataset.slug);
      input.addEventListener('change', () => {
        state.datasets = [...box.querySelectorAll('input:checked')].map(
          (node) => /** @type {HTMLInputElement} */ (node).value,
        );
        filtersChanged();
      });
      const label = element('label', { for: input.id }, [
        `${dataset.title} `,
        element('span', { class: 'count' }, [formatCount(dataset.eventCount)]),
      ]);
      return element('div', { class: 'check' }, [input, label]);
    }),
  );
  box.replaceChildren(
    element('legend', {}, ['Datasets']),
    element('p', { class: 'hint' }, ['None ticked shows every dataset.']),
    ...items,
  );
}
