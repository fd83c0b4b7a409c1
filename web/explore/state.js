// The page's state lives in the URL so a view can be shared as a link and a reload restores it.
// Query names follow the API where there is one (catalog, datasets, startDate, endDate, page).

/**
 * @typedef {{
 *   lng: number, lat: number, zoom: number,
 *   catalog: string, datasets: string[],
 *   startDate: string, endDate: string, page: number,
 *   mode: 'auto' | 'markers' | 'tiles',
 * }} ExploreState
 */

/** @type {ExploreState} */
export const DEFAULT_STATE = {
  lng: 10,
  lat: 25,
  zoom: 1.2,
  catalog: '',
  datasets: [],
  startDate: '',
  endDate: '',
  page: 1,
  // How the map draws the events: 'markers' (HTML markers from /api/v1/events/geo), 'tiles'
  // (vector tiles MapLibre reads itself) or 'auto': tiles, the faster in every view measured, until
  // the keyboard is used, then markers, which Tab reaches (docs/api-v1.md, "The Explore page").
  mode: 'auto',
};

const SLUG = /^[a-z0-9][a-z0-9-]*$/;
const DATE = /^\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?$/;

/**
 * @param {string | null} raw
 * @param {number} min
 * @param {number} max
 * @param {number} fallback
 */
function number(raw, min, max, fallback) {
  const value = raw === null || raw === '' ? NaN : Number(raw);
  return Number.isFinite(value) && value >= min && value <= max ? value : fallback;
}

/** @param {string} search @returns {ExploreState} */
export function readState(search) {
  const params = new URLSearchParams(search);
  const text = (/** @type {string} */ name, /** @type {RegExp} */ pattern) => {
    const value = params.get(name) ?? '';
    return pattern.test(value) ? value : '';
  };
  return {
    lng: number(params.get('lng'), -180, 180, DEFAULT_STATE.lng),
    lat: number(params.get('lat'), -85, 85, DEFAULT_STATE.lat),
    zoom: number(params.get('zoom'), 0, 22, DEFAULT_STATE.zoom),
    catalog: text('catalog', SLUG),
    datasets: (params.get('datasets') ?? '').split(',').filter((slug) => SLUG.test(slug)),
    startDate: text('startDate', DATE),
    endDate: text('endDate', DATE),
    page: Math.floor(number(params.get('page'), 1, 1e6, 1)),
    mode:
      params.get('mode') === 'tiles'
        ? 'tiles'
        : params.get('mode') === 'markers'
          ? 'markers'
          : DEFAULT_STATE.mode,
  };
}

/** @param {ExploreState} state @returns {string} */
export function writeState(state) {
  const params = new URLSearchParams();
  params.set('lng', state.lng.toFixed(4));
  params.set('lat', state.lat.toFixed(4));
  // Four decimals: a view fitted to the data has any zoom, and at world scale 0.005 of a zoom level is
  // a degree at the map's edges, so two decimals did not bring a shared link back to the same view.
  params.set('zoom', state.zoom.toFixed(4));
  if (state.catalog) params.set('catalog', state.catalog);
  if (state.datasets.length > 0) params.set('datasets', state.datasets.join(','));
  if (state.startDate) params.set('startDate', state.startDate);
  if (state.endDate) params.set('endDate', state.endDate);
  if (state.page > 1) params.set('page', String(state.page));
  if (state.mode !== DEFAULT_STATE.mode) params.set('mode', state.mode);
  return `?${params.toString().replaceAll('%2C', ',')}`;
}

/**
 * The API's `bounds` for a map view: longitudes wrapped into ±180 (west > east crosses the
 * antimeridian), the whole world once the view spans 360°, latitudes clamped.
 * @param {{ west: number, east: number, south: number, north: number }} view
 */
export function apiBounds(view) {
  const wrap = (/** @type {number} */ lon) => ((((lon + 180) % 360) + 360) % 360) - 180;
  const clampLat = (/** @type {number} */ lat) => Math.max(-90, Math.min(90, lat));
  const round = (/** @type {number} */ value) => Math.round(value * 1e5) / 1e5;
  const whole = view.east - view.west >= 360;
  return {
    north: round(clampLat(view.north)),
    south: round(clampLat(view.south)),
    east: whole ? 180 : round(view.east === 180 ? 180 : wrap(view.east)),
    west: whole ? -180 : round(wrap(view.west)),
  };
}

/** The /api/v1 zoom for a MapLibre zoom: cells of 64-128 px (MapLibre's tiles are 512 px). */
export function apiZoom(/** @type {number} */ mapZoom) {
  return Math.max(0, Math.min(22, Math.floor(mapZoom) + 1));
}
