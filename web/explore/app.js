// The Explore page: a MapLibre map with the clusters of /api/v1/events/geo, a timeline histogram of
// /api/v1/events/temporal with a brush, filters from /api/v1/data-sources and the list of the events
// in view from /api/v1/events. Everything it knows comes from the public API; its state is the URL.

import { getJson, isAbort, Requests } from './api.js';
import { followBackgroundExports, pointDownloadLinks } from './downloads.js';
import { formatCount } from './format.js';
import { apiBounds, apiZoom, readState, writeState } from './state.js';
import { Timeline } from './timeline.js';
import { DetailPanel } from './detail.js';
import { markerButton } from './markers.js';
import { drawFilterControls } from './filters.js';
import { fitOf } from './fit.js';
import { baseStyle } from './basemap.js';
import { setupSaveView } from './save-view.js';
import { drawnTiles, hideTiles, showTiles, TILE_LAYERS, TILE_SOURCE, tileZoom } from './tiles.js';

const PAGE_SIZE = 20;
const DEBOUNCE_MS = 200;
/** From this API zoom on, a cluster is events at one exact spot: clicking lists them. */
const EXACT_ZOOM = 16;

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const settings = JSON.parse(byId('explore-settings').textContent ?? '{}');
const initialQuery = settings.view ?? window.location.search; // an embed: its saved view's state
const state = readState(initialQuery);
const hadView = new URLSearchParams(initialQuery).has('zoom');
followBackgroundExports(document.getElementById('download-progress'));
/** MapLibre GL JS, served by this service from its npm package (versioned URL, cached for good). */
const maplibregl = await import(`${settings.maplibre}/maplibre-gl.mjs`);

// What tests and the benchmark watch: a generation number per finished refresh, and marks.
const status = {
  generation: 0,
  clusters: 0,
  clusterTotal: 0,
  histogramTotal: 0,
  listTotal: 0,
  errors: 0,
  /** @type {object | null} the bounds of the clusters drawn */
  bounds: null,
};
/** @type {Set<string>} */
const pending = new Set();
function busy(/** @type {string} */ kind, /** @type {boolean} */ on) {
  if (on) pending.add(kind);
  else pending.delete(kind);
  document.body.toggleAttribute('data-loading', pending.size > 0);
  if (!on && pending.size === 0) {
    status.generation += 1;
    document.body.dataset.generation = String(status.generation);
  }
}

// ---- the map -------------------------------------------------------------------------------------

const base = await baseStyle(settings, maplibregl);
/** @type {any} */
let map = null;
try {
  map = new maplibregl.Map({
    container: 'map',
    style: base.style,
    center: [state.lng, state.lat],
    zoom: state.zoom,
    maxZoom: 18,
    dragRotate: false,
    pitchWithRotate: false,
    renderWorldCopies: true,
    // Count labels (symbols) appear at once: MapLibre's default 300 ms fade-in kept the map busy
    // after every move in vector-tile drawing (bench/explore/run.ts: 278 against 19 ms for Europe).
    fadeDuration: 0,
  });
  map.touchZoomRotate.disableRotation();
  map.keyboard.disableRotation();
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }), 'top-right');
  map.addControl(new maplibregl.ScaleControl({}), 'bottom-left');
} catch (error) {
  showMapError(`The map cannot be drawn in this browser (${/** @type {Error} */ (error).message}).`);
}
if (base.problem) showMapError(base.problem);

/** @param {string} message */
function showMapError(message) {
  const box = byId('map-error');
  box.textContent = message;
  box.hidden = false;
}

/** The current view as the API's bounds and zoom. */
function view() {
  if (!map) return { bounds: { north: 90, south: -90, east: 180, west: -180 }, zoom: 1 };
  const b = map.getBounds();
  return {
    bounds: apiBounds({ west: b.getWest(), east: b.getEast(), south: b.getSouth(), north: b.getNorth() }),
    zoom: apiZoom(map.getZoom()),
  };
}

function filters() {
  return { catalog: state.catalog, datasets: state.datasets };
}

function dates() {
  return { startDate: state.startDate, endDate: state.endDate };
}

/** Whether the page was used with the keyboard (Tab): then automatic mode draws markers. */
let keyboardUsed = false;

/**
 * How the map draws the events now. Automatic mode draws vector tiles, faster than markers in every
 * view measured (docs/explore.md), until the keyboard is used: then markers, since Tab and screen
 * readers reach HTML buttons and not what is drawn on the canvas.
 * @returns {'markers' | 'tiles'}
 */
function drawing() {
  if (state.mode === 'auto') return keyboardUsed ? 'markers' : 'tiles';
  return state.mode;
}

/** @type {any[]} */
let markers = [];

/**
 * @param {any[]} features GeoJSON features of /events/geo
 * @param {{ p20: number, p40: number, p60: number, p80: number, p100: number }} stats
 */
function drawClusters(features, stats) {
  for (const marker of markers) marker.remove();
  markers = [];
  const breaks = [stats.p20, stats.p40, stats.p60, stats.p80];
  let total = 0;
  for (const feature of features) {
    const [lng, lat] = feature.geometry.coordinates;
    const props = feature.properties;
    const cluster = props.type === 'event-cluster';
    const count = cluster ? props.count : 1;
    total += count;
    const size = 1 + breaks.filter((limit) => count > limit).length;
    const button = markerButton(props, count, size, view().zoom >= EXACT_ZOOM);
    button.addEventListener('click', (event) => {
      event.stopPropagation();
      if (!cluster) void detail.showEventAt(Number(props.id), spotParams(lng, lat), map);
      else if (view().zoom >= EXACT_ZOOM) void detail.showEventsAt(spotParams(lng, lat), count, map);
      else map.easeTo({ center: [lng, lat], zoom: Math.min(map.getZoom() + 2, 17) });
    });
    markers.push(new maplibregl.Marker({ element: button }).setLngLat([lng, lat]).addTo(map));
  }
  status.clusters = features.length;
  status.clusterTotal = total;
  byId('map').dataset.clusterTotal = String(total);
}

let styleLoaded = false;
map?.once('load', () => {
  styleLoaded = true;
});
/** The filter the vector tiles drawn are for ('': none drawn). */
let tilesFor = '';
/** Vector-tile mode (web/explore/tiles.js): MapLibre fetches the tiles; done when it has drawn them. */
function refreshTiles() {
  // A source can be added only once the style has loaded (the markers need no style).
  if (!styleLoaded) {
    map.once('load', refreshTiles);
    return;
  }
  drawClusters([], { p20: 0, p40: 0, p60: 0, p80: 0, p100: 0 });
  const params = { ...filters(), ...dates() };
  if (JSON.stringify(params) !== tilesFor) {
    showTiles(map, params);
    tilesFor = JSON.stringify(params);
  }
  const done = () => {
    const drawn = drawnTiles(map);
    status.clusters = drawn.features;
    status.clusterTotal = drawn.total;
    byId('map').dataset.clusterTotal = String(drawn.total);
    status.bounds = view().bounds;
    performance.mark('explore:clusters-drawn');
    busy('map', false);
  };
  if (map.loaded() && map.isSourceLoaded(TILE_SOURCE)) done();
  else map.once('idle', done);
}

const detail = new DetailPanel((error) => failed('detail', error));
const mapRequests = new Requests();
async function refreshMap() {
  if (!map) {
    busy('map', false);
    return;
  }
  byId('map').dataset.drawing = drawing();
  if (drawing() === 'tiles') {
    mapRequests.next();
    refreshTiles();
    return;
  }
  if (tilesFor) hideTiles(map);
  tilesFor = '';
  const signal = mapRequests.next();
  const { bounds, zoom } = view();
  const params = { ...filters(), ...dates(), bounds, zoom };
  try {
    const [geo, stats] = await Promise.all([
      getJson('/api/v1/events/geo', params, signal),
      getJson('/api/v1/events/geo/stats', params, signal),
    ]);
    drawClusters(geo.features, stats);
    status.bounds = bounds;
    performance.mark('explore:clusters-drawn');
    busy('map', false);
  } catch (error) {
    if (isAbort(error)) return;
    failed('map', error);
  }
}

// ---- the timeline --------------------------------------------------------------------------------

const timeline = new Timeline(byId('timeline'), ({ startDate, endDate }) => {
  state.startDate = startDate;
  state.endDate = endDate;
  datesChanged();
});
/** @type {{ histogram: any[], total: number }} */
let histogram = { histogram: [], total: 0 };

function selection() {
  if (!state.startDate && !state.endDate) return null;
  const start = state.startDate ? Date.parse(state.startDate) : -Infinity;
  // A bare date as endDate includes that whole day, as in the API.
  const end = state.endDate
    ? Date.parse(state.endDate) + (state.endDate.length === 10 ? 86_399_999 : 0)
    : Infinity;
  return { start, end };
}

function drawTimeline() {
  timeline.render(histogram.histogram, histogram.total, selection());
  const range = byId('timeline-range');
  range.textContent = state.startDate || state.endDate ? '· dates selected' : '';
}

const timelineRequests = new Requests();
async function refreshTimeline() {
  const signal = timelineRequests.next();
  const target = Math.max(20, Math.min(120, Math.floor(byId('timeline').clientWidth / 12)));
  try {
    const body = await getJson(
      '/api/v1/events/temporal',
      {
        ...filters(),
        bounds: view().bounds,
        targetBuckets: target,
        minBuckets: Math.max(1, Math.floor(target / 2)),
        maxBuckets: Math.min(500, target * 2),
      },
      signal,
    );
    histogram = { histogram: body.histogram, total: body.metadata.total };
    status.histogramTotal = body.metadata.total;
    drawTimeline();
    performance.mark('explore:histogram-drawn');
    busy('timeline', false);
  } catch (error) {
    if (isAbort(error)) return;
    failed('timeline', error);
  }
}

// ---- the list and the event details -----------------------------------------------------------------

const listRequests = new Requests();
async function refreshList() {
  pointDownloadLinks({ ...filters(), ...dates() }, view().bounds);
  const signal = listRequests.next();
  try {
    const body = await getJson(
      '/api/v1/events',
      { ...filters(), ...dates(), bounds: view().bounds, page: state.page, limit: PAGE_SIZE },
      signal,
    );
    const { pagination } = body;
    if (pagination.totalPages > 0 && state.page > pagination.totalPages) {
      state.page = pagination.totalPages;
      saveState();
      void refreshList();
      return;
    }
    byId('event-list').replaceChildren(
      ...body.events.map((/** @type {any} */ event) => detail.listItem(event, map)),
    );
    status.listTotal = pagination.totalDocs;
    byId('page-info').textContent =
      pagination.totalDocs === 0
        ? 'No events'
        : `Page ${formatCount(pagination.page)} of ${formatCount(pagination.totalPages)}`;
    /** @type {HTMLButtonElement} */ (byId('prev-page')).disabled = !pagination.hasPrevPage;
    /** @type {HTMLButtonElement} */ (byId('next-page')).disabled = !pagination.hasNextPage;
    const dated = state.startDate || state.endDate ? ' in the selected dates' : '';
    byId('summary').textContent = `${formatCount(pagination.totalDocs)} events in view${dated}`;
    busy('list', false);
  } catch (error) {
    if (isAbort(error)) return;
    failed('list', error);
  }
}

/** The events at one spot: /api/v1/events with a tiny box around it. */
function spotParams(/** @type {number} */ lng, /** @type {number} */ lat, d = 1e-5) {
  return {
    ...filters(),
    ...dates(),
    bounds: apiBounds({ west: lng - d, east: lng + d, south: lat - d, north: lat + d }),
  };
}

// ---- filters ----------------------------------------------------------------------------------------

/** @type {any[]} */
let catalogs = [];

const drawFilters = () => drawFilterControls(catalogs, state, filtersChanged);

async function loadFilters() {
  try {
    const body = await getJson('/api/v1/data-sources', {});
    catalogs = body.catalogs;
    drawFilters();
  } catch (error) {
    failed('filters', error);
  }
}

/** @param {string} kind @param {unknown} error */
function failed(kind, error) {
  status.errors += 1;
  busy(kind, false);
  const message = error instanceof Error ? error.message : String(error);
  byId('summary').textContent = `Could not load the ${kind === 'map' ? 'map clusters' : kind}: ${message}`;
}

// ---- state changes -------------------------------------------------------------------------------

function saveState() {
  if (map) {
    const center = map.getCenter().wrap();
    state.lng = center.lng;
    state.lat = center.lat;
    state.zoom = map.getZoom();
  }
  if (!settings.embed) window.history.replaceState(null, '', writeState(state));
}

/** @type {ReturnType<typeof setTimeout> | undefined} */
let timer;
/** @type {Set<'map' | 'timeline' | 'list'>} */
const due = new Set();
/** Debounced: a burst of changes (a drag, typing a date) makes one round of requests. */
function schedule(/** @type {('map' | 'timeline' | 'list')[]} */ kinds) {
  for (const kind of kinds) {
    due.add(kind);
    busy(kind, true);
  }
  clearTimeout(timer);
  timer = setTimeout(() => {
    saveState();
    if (due.has('map')) void refreshMap();
    if (due.has('timeline')) void refreshTimeline();
    if (due.has('list')) void refreshList();
    due.clear();
  }, DEBOUNCE_MS);
}

function filtersChanged() {
  state.page = 1;
  drawFilters();
  schedule(['map', 'timeline', 'list']);
}

function datesChanged() {
  state.page = 1;
  /** @type {HTMLInputElement} */ (byId('start-date')).value = state.startDate.slice(0, 10);
  /** @type {HTMLInputElement} */ (byId('end-date')).value = state.endDate.slice(0, 10);
  drawTimeline();
  schedule(['map', 'list']);
}

byId('catalog').addEventListener('change', (event) => {
  state.catalog = /** @type {HTMLSelectElement} */ (event.target).value;
  const inCatalog = new Set(
    catalogs
      .filter((catalog) => !state.catalog || catalog.slug === state.catalog)
      .flatMap((catalog) => catalog.datasets.map((/** @type {any} */ dataset) => dataset.slug)),
  );
  state.datasets = state.datasets.filter((slug) => inCatalog.has(slug));
  filtersChanged();
});
for (const [id, key] of /** @type {const} */ ([
  ['start-date', 'startDate'],
  ['end-date', 'endDate'],
])) {
  byId(id).addEventListener('change', (event) => {
    state[key] = /** @type {HTMLInputElement} */ (event.target).value;
    datesChanged();
  });
}
byId('clear-dates').addEventListener('click', () => {
  state.startDate = '';
  state.endDate = '';
  datesChanged();
});
byId('prev-page').addEventListener('click', () => {
  state.page = Math.max(1, state.page - 1);
  schedule(['list']);
});
byId('next-page').addEventListener('click', () => {
  state.page += 1;
  schedule(['list']);
});
const modeSelect = /** @type {HTMLSelectElement} */ (byId('map-mode'));
modeSelect.value = state.mode;
modeSelect.addEventListener('change', () => {
  const chosen = modeSelect.value;
  state.mode = chosen === 'tiles' || chosen === 'markers' ? chosen : 'auto';
  schedule(['map']);
});
document.addEventListener('keydown', (event) => {
  if (event.key !== 'Tab' || keyboardUsed) return;
  keyboardUsed = true;
  if (state.mode === 'auto') schedule(['map']);
});
if (window.matchMedia('(max-width: 760px)').matches) {
  /** @type {HTMLDetailsElement} */ (byId('filters-box')).open = false;
}

if (map) {
  map.on('movestart', () => busy('move', true));
  // Tests and the benchmark wait for the map to have drawn everything it loaded.
  map.on('idle', () => {
    document.body.setAttribute('data-map-idle', '');
    // In vector-tile mode the events are drawn when the map is idle (the benchmark's mark).
    if (drawing() === 'tiles') performance.mark('explore:tiles-drawn');
  });
  map.on('render', () => document.body.removeAttribute('data-map-idle'));
  // Vector-tile mode: a point shows its event (looked up within a tile pixel of where it is drawn),
  // a cluster zooms in or, at exact locations, lists its events.
  map.on('click', (/** @type {any} */ event) => {
    if (drawing() !== 'tiles') return;
    const [feature] = map.queryRenderedFeatures(event.point, { layers: TILE_LAYERS });
    if (!feature) return;
    const [lng, lat] = feature.geometry.coordinates;
    const props = feature.properties;
    const pixel = 360 / 2 ** tileZoom(map) / 4096;
    if (props.type === 'event-point')
      void detail.showEventAt(Number(props.id), spotParams(lng, lat, Math.max(1e-5, 2 * pixel)), map);
    else if (tileZoom(map) >= EXACT_ZOOM)
      void detail.showEventsAt(spotParams(lng, lat), Number(props.count), map);
    else map.easeTo({ center: [lng, lat], zoom: Math.min(map.getZoom() + 2, 17) });
  });
  map.on('moveend', () => {
    busy('move', false);
    state.page = 1;
    schedule(['map', 'timeline', 'list']);
  });
}

/** With no view in the URL, fit the map to the events (GET /api/v1/events/bounds). */
async function start() {
  busy('start', true);
  datesChanged();
  await loadFilters();
  if (map && !hadView) {
    try {
      const body = await getJson('/api/v1/events/bounds', { ...filters(), ...dates() });
      const fit = fitOf(body.bounds);
      if (fit) map.fitBounds(fit.bounds, { padding: fit.padding, duration: 0, maxZoom: 12 });
    } catch {
      // keep the default world view
    }
  }
  schedule(['map', 'timeline', 'list']);
  busy('start', false);
}

/** @type {any} */ (window).explore = { map, state, status };
const mapBox = () => view().bounds;
if (!settings.embed) setupSaveView(() => (saveState(), state), mapBox);
void start();
