// The map under the events, every part of it from this service (docs/explore.md, "The base map"):
// - with a PMTiles archive (MAP_BASEMAP_PMTILES): the Protomaps style the service makes
//   (/basemap/style.json), its vector tiles read from the archive in byte ranges by the pmtiles
//   package's reader (MapLibre's `addProtocol`), its labels drawn with the service's glyphs;
// - with a raster tile template (MAP_TILE_URL): those tiles, country borders on top;
// - else: sea, Natural Earth's countries and the names of towns (GeoNames), drawn with the glyphs.

/**
 * Towns are named from a zoom that grows as their population shrinks (explore.ts, PLACE_ZOOMS). The
 * layers go from the smallest towns up: MapLibre places the top layer's names first, so a city's
 * name is never pushed out by a town's.
 */
const PLACE_ZOOMS = [7, 6, 5, 4, 3, 2];

/**
 * An absolute URL on this service for a path of it: MapLibre resolves style URLs in its worker, not
 * against the page. (Not `new URL`: it would escape the braces of the glyphs' `{fontstack}/{range}`.)
 */
const here = (/** @type {string} */ path) => `${window.location.origin}${path}`;

/**
 * @param {any} settings the page's settings (explore.ts)
 * @returns {any} a style that needs no tile server: sea, land, country borders and town names.
 */
function defaultStyle(settings) {
  /** @type {Record<string, any>} */
  const sources = {
    countries: { type: 'geojson', data: here(settings.countries), attribution: 'Natural Earth' },
  };
  /** @type {any[]} */
  const layers = [{ id: 'sea', type: 'background', paint: { 'background-color': '#cfdfec' } }];
  if (settings.tileUrl) {
    sources.tiles = {
      type: 'raster',
      tiles: [settings.tileUrl],
      tileSize: 256,
      ...(settings.tileAttribution ? { attribution: settings.tileAttribution } : {}),
    };
    layers.push({ id: 'tiles', type: 'raster', source: 'tiles' });
  } else {
    layers.push({ id: 'land', type: 'fill', source: 'countries', paint: { 'fill-color': '#f6f3ea' } });
  }
  layers.push({
    id: 'borders',
    type: 'line',
    source: 'countries',
    paint: { 'line-color': '#8d877c', 'line-width': ['interpolate', ['linear'], ['zoom'], 1, 0.4, 6, 1.2] },
  });
  if (!settings.tileUrl) {
    sources.places = { type: 'geojson', data: here(settings.places), attribution: 'GeoNames' };
    for (const zoom of PLACE_ZOOMS) {
      layers.push({
        id: `places-${zoom}`,
        type: 'symbol',
        source: 'places',
        minzoom: zoom,
        filter: ['==', ['get', 'zoom'], zoom],
        layout: {
          'text-field': ['get', 'name'],
          'text-font': [settings.font],
          // Bigger towns in bigger letters.
          'text-size': ['interpolate', ['linear'], ['zoom'], 2, 17 - zoom, 10, 21 - zoom],
          // The larger town wins where two names would overlap.
          'symbol-sort-key': ['get', 'rank'],
        },
        paint: { 'text-color': '#5b564d', 'text-halo-color': '#fbf9f3', 'text-halo-width': 1.2 },
      });
    }
  }
  return { version: 8, glyphs: here(settings.glyphs), sources, layers };
}

/**
 * The style the map starts with: the archive's when the service has one (the default when its style
 * cannot be read, with the reason in `problem`).
 * @param {any} settings the page's settings
 * @param {any} maplibregl
 * @returns {Promise<{ style: any, problem: string | null }>}
 */
export async function baseStyle(settings, maplibregl) {
  if (!settings.basemap) return { style: defaultStyle(settings), problem: null };
  try {
    const response = await fetch(settings.basemap);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const style = await response.json();
    // pmtiles' browser build (a classic script of the page) reads the archive with Range requests.
    const pmtiles = /** @type {any} */ (window).pmtiles;
    maplibregl.addProtocol('pmtiles', new pmtiles.Protocol().tile);
    style.glyphs = here(style.glyphs);
    for (const source of Object.values(style.sources)) {
      const archive = /** @type {any} */ (source).url.replace(/^pmtiles:\/\//, '');
      /** @type {any} */ (source).url = `pmtiles://${here(archive)}`;
    }
    return { style, problem: null };
  } catch (error) {
    return {
      style: defaultStyle(settings),
      problem: `The basemap could not be loaded (${/** @type {Error} */ (error).message}).`,
    };
  }
}
