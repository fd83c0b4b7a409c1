import type { Bounds } from './read-query.ts';

// Map clustering parameters: which Web Mercator grid level groups events at a given map zoom. The
// database stores every event's cell at GRID_LEVEL (x and y, 24 bits each); a cluster at level L is
// the set of events sharing the top L bits of both, so clustering is an integer GROUP BY.

/** Precision of the per-event cell indices stored in the database (about 2.4 m at the equator). */
export const GRID_LEVEL = 24;
/** Level of the precomputed per-month cell counts (about 39 km cells); usable for levels <= this. */
export const ROLLUP_LEVEL = 10;
/**
 * Level of the coarse cell counts (about 625 km at the equator; migration 0963): the level-10 counts
 * of the totals and of each catalog summed per level-6 cell, for map views at levels <= this (zoom
 * 0-4), whose boxes hold many level-10 cells.
 */
export const COARSE_LEVEL = 6;
/**
 * Level of the precomputed all-time, all-dataset cell counts (about 600 m cells at the equator),
 * for unfiltered views at levels ROLLUP_LEVEL+1 .. FINE_LEVEL (zoom 9 to 13).
 */
export const FINE_LEVEL = 16;
/** From this zoom on, events are shown one by one (only identical locations are grouped). */
export const INDIVIDUAL_ZOOM = 16;
/** Clusters of this many events or fewer list their event ids. */
export const MAX_EVENT_IDS = 10;

const MAX_MERCATOR_LATITUDE = 85.05112878;

/**
 * The grid level for a zoom, or null for "no grid: group identical locations only".
 * - zoom >= 16: null.
 * - zoom 10-15: levels 15-17, cells of roughly 1000 m down to 150 m (1223 m at the equator and
 *   612 m at 60° at zoom 10; 306 m and 153 m at zoom 15).
 * - zoom < 10: zoom + 2, i.e. cells a quarter of a 256 px tile wide: aggressive clustering.
 */
export function clusterLevel(zoom: number): number | null {
  if (zoom >= INDIVIDUAL_ZOOM) return null;
  if (zoom >= 14) return 17;
  if (zoom >= 12) return 16;
  if (zoom >= 10) return 15;
  return Math.max(0, zoom) + 2;
}

/** The same cell index the database computes (see migrations/0200_read_api.sql). */
export function mercatorCell(longitude: number, latitude: number, level: number): { x: number; y: number } {
  const size = 2 ** level;
  const lat = Math.max(-MAX_MERCATOR_LATITUDE, Math.min(MAX_MERCATOR_LATITUDE, latitude));
  const fx = (longitude + 180) / 360;
  const fy = (1 - Math.asinh(Math.tan((lat * Math.PI) / 180)) / Math.PI) / 2;
  const clamp = (value: number) => Math.min(size - 1, Math.max(0, Math.floor(value * size)));
  return { x: clamp(fx), y: clamp(fy) };
}

/** The longitude/latitude box of a cell (north is the smaller y). */
export function cellBounds(x: number, y: number, level: number): Bounds {
  const size = 2 ** level;
  const lat = (row: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * row) / size))) * 180) / Math.PI;
  return {
    west: (x / size) * 360 - 180,
    east: ((x + 1) / size) * 360 - 180,
    north: lat(y),
    south: lat(y + 1),
  };
}

/**
 * The box around a range of cells of a level, rounded outward to whole cells. The top and bottom
 * rows also hold the events beyond Web Mercator's latitude limit (cells clamp them), so they reach
 * the pole.
 */
export function cellRangeBounds(
  range: { x0: number; x1: number; y0: number; y1: number },
  level: number,
): Bounds {
  const last = 2 ** level - 1;
  const northWest = cellBounds(range.x0, range.y0, level);
  const southEast = cellBounds(range.x1, range.y1, level);
  return {
    west: northWest.west,
    east: southEast.east,
    north: range.y0 === 0 ? 90 : northWest.north,
    south: range.y1 === last ? -90 : southEast.south,
  };
}

/**
 * The cells of a level that lie wholly inside a (non-crossing) longitude/latitude box: precomputed
 * counts of those cells are exact for the box; events in the partly covered edge cells are counted
 * from the rows. Null when no cell fits inside.
 */
export function innerCellRange(
  box: Bounds,
  level: number,
): { x0: number; x1: number; y0: number; y1: number } | null {
  const size = 2 ** level;
  const fx = (lon: number) => ((lon + 180) / 360) * size;
  const fy = (lat: number) => {
    const clamped = Math.max(-MAX_MERCATOR_LATITUDE, Math.min(MAX_MERCATOR_LATITUDE, lat));
    return ((1 - Math.asinh(Math.tan((clamped * Math.PI) / 180)) / Math.PI) / 2) * size;
  };
  // A cell counts as inside only when its edges are strictly inside the box, with a margin that
  // absorbs floating-point differences between this code and the database.
  const epsilon = 1e-9 * size;
  // A box reaching the edge of the world takes the edge cells whole (the grid clamps into them
  // exactly the events at ±180° and beyond ±85.05°); otherwise the rows at the poles, which hold
  // events beyond ±85.05°, are never inside.
  const x0 = box.west <= -180 ? 0 : Math.ceil(fx(box.west) + epsilon);
  const x1 = box.east >= 180 ? size - 1 : Math.floor(fx(box.east) - epsilon) - 1;
  const y0 = box.north >= 90 ? 0 : Math.max(1, Math.ceil(fy(box.north) + epsilon));
  const y1 = box.south <= -90 ? size - 1 : Math.min(size - 2, Math.floor(fy(box.south) - epsilon) - 1);
  if (x0 > x1 || y0 > y1) return null;
  return { x0, x1, y0, y1 };
}

/**
 * The share of the Web Mercator map of the world (latitudes clamped to ±85.05°) a box covers, 0 to
 * 1; a box with west > east crosses the antimeridian.
 */
export function mercatorShare(box: Bounds): number {
  const span = box.west <= box.east ? box.east - box.west : 360 - (box.west - box.east);
  return (span / 360) * (mercatorY(box.south) - mercatorY(box.north));
}

/** A latitude's position on the Web Mercator map, 0 at the top (85.05° N) to 1 at the bottom. */
export function mercatorY(latitude: number): number {
  const lat = Math.max(-MAX_MERCATOR_LATITUDE, Math.min(MAX_MERCATOR_LATITUDE, latitude));
  return Math.min(1, Math.max(0, (1 - Math.asinh(Math.tan((lat * Math.PI) / 180)) / Math.PI) / 2));
}

/**
 * The level-24 cell index ranges a longitude/latitude box (not crossing the antimeridian) lies in,
 * widened by one cell against rounding: a condition on them adds nothing to the box test but lets
 * an index on the cell indices find the rows.
 */
export function gridRange(box: Bounds): { x0: number; x1: number; y0: number; y1: number } {
  const max = 2 ** GRID_LEVEL - 1;
  const northWest = mercatorCell(box.west, box.north, GRID_LEVEL);
  const southEast = mercatorCell(box.east, box.south, GRID_LEVEL);
  return {
    x0: Math.max(0, northWest.x - 1),
    x1: Math.min(max, southEast.x + 1),
    y0: Math.max(0, northWest.y - 1),
    y1: Math.min(max, southEast.y + 1),
  };
}
