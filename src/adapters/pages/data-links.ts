import { type Html, html } from './html.ts';

// The one place the pages build the links to someone's data (issue 28 §6): a dataset on the
// Explore page and in the read API's two exports (docs/api-v1.md, "Exports"), and the account's
// own-data export. My imports, the dashboard's dataset page and the account page all call these,
// so a changed URL changes everywhere at once. Dataset slugs are unique across catalogs
// (migration 0001), so `datasets=<slug>` alone names one dataset; the exports answer a signed-in
// caller with what they may read, so a private dataset's links work for its owner.

/** Explore filtered to the dataset, and its CSV and GeoJSON exports. */
function datasetDataUrls(slug: string): { explore: string; csv: string; geojson: string } {
  const query = `datasets=${encodeURIComponent(slug)}`;
  return {
    explore: `/?${query}`,
    csv: `/api/v1/events.csv?${query}`,
    geojson: `/api/v1/events.geojson?${query}`,
  };
}

/** The dataset's data as a line of links (`data-dataset-links` finds it in the browser tests). */
export function datasetDataLinks(slug: string): Html {
  const urls = datasetDataUrls(slug);
  return html`<p class="data-links" data-dataset-links="${slug}">
    <b>The data:</b> <a href="${urls.explore}" data-link="explore">Explore</a> · Download
    <a href="${urls.csv}" download data-link="csv">CSV</a> ·
    <a href="${urls.geojson}" download data-link="geojson">GeoJSON</a>
  </p>`;
}

/** The ZIP of one of the caller's own-data exports (GET /api/data-exports/{id}/download). */
export const accountExportDownloadUrl = (exportId: number): string =>
  `/api/data-exports/${exportId}/download`;
