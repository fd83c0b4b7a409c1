import { get, type MatrixRow, publicRead } from './route-authorization-helpers.ts';

// The matrix rows of the static assets: the map library, the account pages' and the Explore page's
// scripts, styles and data, and the offline basemap. Code and public data, public like the Explore
// page (route-authorization-table.ts spreads them into the one matrix).

export const assetRows: Record<string, MatrixRow> = {
  'GET /assets/maplibre-gl-6.17.0/maplibre-gl-worker.mjs': publicRead(
    '/assets/maplibre-gl-6.17.0/maplibre-gl-worker.mjs',
  ),
  'GET /assets/maplibre-gl-6.17.0/maplibre-gl.css': publicRead('/assets/maplibre-gl-6.17.0/maplibre-gl.css'),
  'GET /assets/maplibre-gl-6.17.0/maplibre-gl.mjs': publicRead('/assets/maplibre-gl-6.17.0/maplibre-gl.mjs'),
  // The account pages' scripts (web/account/): code, public like the Explore page's.
  'GET /account/assets/import-wizard.js': publicRead('/account/assets/import-wizard.js'),
  'GET /account/assets/ingest-progress.js': publicRead('/account/assets/ingest-progress.js'),
  'GET /account/assets/scheduled-import-preview.js': publicRead(
    '/account/assets/scheduled-import-preview.js',
  ),
  'GET /account/assets/copy-buttons.js': publicRead('/account/assets/copy-buttons.js'),
  'GET /account/assets/scraper-watch.js': publicRead('/account/assets/scraper-watch.js'),
  'GET /assets/pmtiles-4.5.0/pmtiles.js': publicRead('/assets/pmtiles-4.5.0/pmtiles.js'),
  // The offline basemap (docs/explore.md): the archive and its style only when MAP_BASEMAP_PMTILES
  // is set (the matrix's service has none; test/unit/adapters/web/basemap.test.ts has one), the
  // glyphs always (the default map's town names).
  'GET /basemap/basemap.pmtiles': {
    expect: [404, 404, 404, 404],
    rule: 'public: the MAP_BASEMAP_PMTILES archive; 404 without one',
    request: get('/basemap/basemap.pmtiles'),
  },
  'GET /basemap/style.json': {
    expect: [404, 404, 404, 404],
    rule: 'public: the basemap style; 404 without MAP_BASEMAP_PMTILES',
    request: get('/basemap/style.json'),
  },
  'GET /basemap/glyphs/:fontstack/:range': publicRead('/basemap/glyphs/DejaVu%20Sans%20Book/0-255.pbf'),
  'GET /explore/api.js': publicRead('/explore/api.js'),
  'GET /explore/basemap.js': publicRead('/explore/basemap.js'),
  'GET /explore/app.js': publicRead('/explore/app.js'),
  'GET /explore/detail.js': publicRead('/explore/detail.js'),
  'GET /explore/downloads.js': publicRead('/explore/downloads.js'),
  'GET /explore/filters.js': publicRead('/explore/filters.js'),
  'GET /explore/fit.js': publicRead('/explore/fit.js'),
  'GET /explore/markers.js': publicRead('/explore/markers.js'),
  'GET /explore/countries.geojson': publicRead('/explore/countries.geojson'),
  'GET /explore/explore.css': publicRead('/explore/explore.css'),
  'GET /explore/format.js': publicRead('/explore/format.js'),
  'GET /explore/places.geojson': publicRead('/explore/places.geojson'),
  'GET /explore/state.js': publicRead('/explore/state.js'),
  'GET /explore/tiles.js': publicRead('/explore/tiles.js'),
  'GET /explore/timeline.js': publicRead('/explore/timeline.js'),
};
