// The vector-tile mode of the Explore page: MapLibre reads /api/v1/tiles.json (TileJSON) and then
// the tiles /api/v1/tiles/{z}/{x}/{y}.mvt itself, in its worker, and draws them on the GPU: no
// marker per cluster in the page. A tile of zoom z holds the clusters /api/v1/events/geo gives at
// zoom z; MapLibre's vector tiles are 512 px, so it draws them from map zoom z to z + 1, where the
// marker mode asks /events/geo for zoom z + 1: the tiles' clusters are one level coarser (cells of
// about 128 px instead of 64), the counts the same.
// Count labels without a glyph server: a symbol layer whose icon is the label's text, drawn on a
// canvas by the page the first time MapLibre asks for it (its missing-image resolver), so the tiles show
// the same "1.2k" as the markers with nothing more to serve or download.

import { query } from './api.js';

export const TILE_SOURCE = 'event-tiles';
export const TILE_LAYERS = ['event-tiles-clusters', 'event-tiles-labels', 'event-tiles-points'];
/** Images of count labels are named `count:<label>`. */
const LABEL_IMAGE = 'count:';

/**
 * The label of a cluster's count as a MapLibre expression: shortCount of format.js (1234 -> "1.2k").
 * @param {any} count
 */
export function shortCountExpression(count) {
  /** The count in `unit`s with `suffix`: whole, or to one decimal ("1.0k" as shortCount writes it). */
  const scaled = (
    /** @type {number} */ unit,
    /** @type {string} */ suffix,
    /** @type {boolean} */ decimal,
  ) => [
    'concat',
    decimal
      ? [
          'number-format',
          ['/', ['round', ['/', count, unit / 10]], 10],
          { locale: 'en-US', 'min-fraction-digits': 1, 'max-fraction-digits': 1 },
        ]
      : ['to-string', ['round', ['/', count, unit]]],
    suffix,
  ];
  return [
    'case',
    ['>=', count, 1e7],
    scaled(1e6, 'M', false),
    ['>=', count, 1e6],
    scaled(1e6, 'M', true),
    ['>=', count, 1e4],
    scaled(1e3, 'k', false),
    ['>=', count, 1e3],
    scaled(1e3, 'k', true),
    ['to-string', count],
  ];
}

/**
 * Draws the image of a count label (white bold text with a dark halo) when MapLibre first needs it.
 * @param {any} map
 * @param {string} id the image MapLibre is missing
 */
function drawLabelImage(map, id) {
  if (!id.startsWith(LABEL_IMAGE)) return;
  const text = id.slice(LABEL_IMAGE.length);
  const ratio = Math.max(1, Math.round(window.devicePixelRatio || 1));
  const canvas = document.createElement('canvas');
  const context = /** @type {CanvasRenderingContext2D} */ (canvas.getContext('2d'));
  const font = `bold ${12 * ratio}px system-ui, sans-serif`;
  context.font = font;
  canvas.width = Math.ceil(context.measureText(text).width + 6 * ratio);
  canvas.height = 18 * ratio;
  context.font = font;
  context.textAlign = 'center';
  context.textBaseline = 'middle';
  context.lineWidth = 3 * ratio;
  context.strokeStyle = 'rgba(124, 45, 18, 0.9)';
  context.strokeText(text, canvas.width / 2, canvas.height / 2);
  context.fillStyle = '#ffffff';
  context.fillText(text, canvas.width / 2, canvas.height / 2);
  map.addImage(id, context.getImageData(0, 0, canvas.width, canvas.height), { pixelRatio: ratio });
}

/**
 * @param {import('./api.js').Params} params the filters (catalog, datasets, startDate, endDate)
 * @returns {string} the TileJSON URL of the filtered tiles, absolute (MapLibre's worker fetches it)
 */
export function tileJsonUrl(params) {
  const search = query(params);
  return new URL(`/api/v1/tiles.json${search ? `?${search}` : ''}`, window.location.href).href;
}

/**
 * Draws the filtered events from vector tiles, replacing any tiles of another filter.
 * @param {any} map a MapLibre map
 * @param {import('./api.js').Params} params
 */
export function showTiles(map, params) {
  hideTiles(map);
  map.addSource(TILE_SOURCE, { type: 'vector', url: tileJsonUrl(params) });
  const common = { source: TILE_SOURCE, 'source-layer': 'events' };
  map.addLayer({
    id: 'event-tiles-clusters',
    type: 'circle',
    ...common,
    filter: ['==', ['get', 'type'], 'event-cluster'],
    paint: {
      // Area grows with the count, as the markers' sizes do.
      'circle-radius': ['min', 30, ['+', 7, ['*', 2.4, ['ln', ['get', 'count']]]]],
      'circle-color': '#c2410c',
      'circle-opacity': 0.8,
      'circle-stroke-color': '#ffffff',
      'circle-stroke-width': 1.5,
    },
  });
  // Called before the layout gives up on the image, unlike the styleimagemissing event (setting it
  // again replaces it).
  map.setMissingStyleImageResolver((/** @type {string} */ id) => drawLabelImage(map, id));
  map.addLayer({
    id: 'event-tiles-labels',
    type: 'symbol',
    ...common,
    filter: ['==', ['get', 'type'], 'event-cluster'],
    layout: {
      'icon-image': ['concat', LABEL_IMAGE, shortCountExpression(['get', 'count'])],
      'icon-allow-overlap': true,
      'icon-ignore-placement': true,
    },
  });
  map.addLayer({
    id: 'event-tiles-points',
    type: 'circle',
    ...common,
    filter: ['==', ['get', 'type'], 'event-point'],
    paint: {
      'circle-radius': 5,
      'circle-color': '#1d4ed8',
      'circle-stroke-color': '#ffffff',
      'circle-stroke-width': 1.5,
    },
  });
}

/**
 * The zoom of the tiles MapLibre draws at the map's zoom (512 px tiles).
 * @param {any} map
 */
export function tileZoom(map) {
  return Math.max(0, Math.floor(map.getZoom()));
}

/** @param {any} map */
export function hideTiles(map) {
  for (const id of TILE_LAYERS) if (map.getLayer(id)) map.removeLayer(id);
  if (map.getSource(TILE_SOURCE)) map.removeSource(TILE_SOURCE);
}

/**
 * The features of the tiles MapLibre holds for the view (the tiles covering it, so a little more
 * than the view): each once (world copies hold the same tiles twice), with the sum of their counts.
 * @param {any} map
 * @returns {{ features: number, total: number }}
 */
export function drawnTiles(map) {
  /** @type {Map<string, number>} */
  const seen = new Map();
  for (const feature of map.querySourceFeatures(TILE_SOURCE, { sourceLayer: 'events' })) {
    const props = feature.properties;
    seen.set(props.type === 'event-point' ? `event:${props.id}` : String(props.key), Number(props.count));
  }
  let total = 0;
  for (const count of seen.values()) total += count;
  return { features: seen.size, total };
}
