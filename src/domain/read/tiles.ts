import { cellBounds, clusterLevel, GRID_LEVEL } from './clustering.ts';
import { invalid } from './read-query.ts';
import type { Bounds } from './read-query.ts';

// Vector tiles (GET /api/v1/tiles/{z}/{x}/{y}.mvt): the tile coordinates, the box a tile covers and
// which clusters it holds. A tile z/x/y is the cell (x, y) of grid level z, the same Web Mercator
// grid the database keeps per event (grid_x, grid_y at GRID_LEVEL), so an event belongs to exactly
// one tile of each zoom: the one whose index is the top z bits of its cell. The tiles covering a
// view therefore count every event once, as /api/v1/events/geo does.

/** Deepest tile zoom accepted (the /events/geo zoom range). */
export const TILE_MAX_ZOOM = 22;
/**
 * Deepest zoom the TileJSON advertises: from zoom 16 on a tile holds single events (exact
 * locations), so a map client over-zooms the zoom-16 tiles instead of asking for deeper ones.
 */
export const TILE_SOURCE_MAX_ZOOM = 16;
/** Tile coordinate space of ST_AsMVTGeom (the MVT default). */
export const TILE_EXTENT = 4096;
/** Name of the one layer of every tile. */
export const TILE_LAYER = 'events';
/**
 * Exact locations one tile holds at most (zoom 16 and deeper). A tile with more is clustered on the
 * cells of TILE_CROWDED_LEVELS levels below the tile's pixel grid, at most 4^TILE_CROWDED_LEVELS
 * features, so that no tile is larger than about a megabyte whatever the data.
 */
export const TILE_MAX_POINTS = 20_000;
const TILE_CROWDED_LEVELS = 6;
/**
 * How much wider than the tile (in degrees) the box the read model filters with is: the exact test
 * of membership is on the cell indices, the box only has to contain the tile (and is widened past
 * the floating-point rounding of the tile's edges, yet by less than a metre).
 */
const TILE_MARGIN_DEGREES = 1e-5;

export type Tile = { z: number; x: number; y: number };

const DIGITS = /^\d{1,10}$/;

/**
 * The tile of a request's path parameters; `row` is `{y}.mvt`. Out of range, non-numeric or another
 * extension: a ValidationError naming the parameter (the spec's 400).
 */
export function parseTile(zText: unknown, xText: unknown, rowText: unknown): Tile {
  const z = parseCoordinate(zText, 'z');
  if (z > TILE_MAX_ZOOM) throw invalid('z', `z must be an integer from 0 to ${TILE_MAX_ZOOM} (got "${z}")`);
  const size = 2 ** z;
  const x = parseCoordinate(xText, 'x');
  if (x >= size) throw invalid('x', `x must be an integer from 0 to ${size - 1} at zoom ${z} (got "${x}")`);
  const text = typeof rowText === 'string' ? rowText : '';
  const dot = text.lastIndexOf('.');
  const extension = dot < 0 ? '' : text.slice(dot + 1);
  if (extension !== 'mvt') throw invalid('y', `a tile is asked for as {y}.mvt (got "${text.slice(0, 40)}")`);
  const y = parseCoordinate(text.slice(0, dot), 'y');
  if (y >= size) throw invalid('y', `y must be an integer from 0 to ${size - 1} at zoom ${z} (got "${y}")`);
  return { z, x, y };
}

function parseCoordinate(value: unknown, parameter: string): number {
  const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  if (!DIGITS.test(text))
    throw invalid(parameter, `${parameter} must be a non-negative integer (got "${text.slice(0, 40)}")`);
  return Number(text);
}

/** The longitude/latitude box of a tile; the edge tiles reach the poles (the grid clamps into them). */
export function tileBounds(tile: Tile): Bounds {
  const box = cellBounds(tile.x, tile.y, tile.z);
  const last = 2 ** tile.z - 1;
  return {
    west: tile.x === 0 ? -180 : box.west,
    east: tile.x === last ? 180 : box.east,
    north: tile.y === 0 ? 90 : box.north,
    south: tile.y === last ? -90 : box.south,
  };
}

/** tileBounds widened by a hair (within the world): the box the read model reads, before the exact cell test. */
export function tileReadBounds(tile: Tile): Bounds {
  const box = tileBounds(tile);
  return {
    west: Math.max(-180, box.west - TILE_MARGIN_DEGREES),
    east: Math.min(180, box.east + TILE_MARGIN_DEGREES),
    north: Math.min(90, box.north + TILE_MARGIN_DEGREES),
    south: Math.max(-90, box.south - TILE_MARGIN_DEGREES),
  };
}

/**
 * The grid level of a tile's clusters: the level /api/v1/events/geo clusters on at the same zoom
 * (clustering.ts; null from zoom 16 on: exact locations). Every cluster cell lies inside one tile,
 * since the level is never coarser than the zoom.
 */
export function tileClusterLevel(z: number): number | null {
  return clusterLevel(z);
}

/** How to shift a level-24 cell index (or a cell index of `level`) to the tile's index at its zoom. */
export function tileShift(tile: Tile, level: number = GRID_LEVEL): number {
  return level - tile.z;
}

/** The level a crowded tile (more than TILE_MAX_POINTS locations) is clustered on instead. */
export function crowdedTileLevel(tile: Tile): number {
  return Math.min(GRID_LEVEL, tile.z + TILE_CROWDED_LEVELS);
}

/**
 * The query parameter of a tile URL that carries the data version it was drawn at (TileJSON puts it
 * in every URL). A tile asked at the current version is immutable; at another one it answers a
 * redirect to the current version's URL (tileVersionRule).
 */
export const TILE_VERSION_PARAMETER = 'v';

/**
 * What a tile request at data version `asked` (undefined: no version in the URL) gets when the data
 * is at `current`: `immutable` (cached for a year: that URL's tile never changes), `revalidate` (no
 * version asked: cached only with revalidation, as the rest of /api/v1), or `moved` (an older or
 * unknown version: its tile is not drawn again, the client is sent to the current version's URL).
 */
export function tileVersionRule(asked: unknown, current: string): 'immutable' | 'revalidate' | 'moved' {
  if (asked === undefined) return 'revalidate';
  return asked === current ? 'immutable' : 'moved';
}
