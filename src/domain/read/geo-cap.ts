import { mercatorY } from './clustering.ts';
import type { Bounds } from './read-query.ts';

// The size bound of /api/v1/events/geo. A feature is a grid cell holding events (or, from zoom 16
// on, one exact location), so an answer has at most as many features as the view has cells. The
// cluster level a zoom asks for is kept while the box spans at most GEO_MAX_CELLS cells of it; a
// larger box (world bounds at zoom 10 asked for 2^30 cells, a 40 MB answer) is clustered on the
// finest level that fits instead, and the answer says `capped: true`.

/**
 * Cells of the cluster level one answer may span. A full-HD window at zoom 10 (cells of level 15)
 * spans about 240 × 135 = 32,400, so real map views keep their level; an answer has at most this
 * many features (about 120 bytes each).
 */
export const GEO_MAX_CELLS = 65_536;

/** Cells of `level` a box touches, partly covered edge cells included. */
export function cellsTouched(box: Bounds, level: number): number {
  const size = 2 ** level;
  const span = box.west <= box.east ? box.east - box.west : 360 - (box.west - box.east);
  const columns = Math.min(size, Math.ceil((span / 360) * size) + 1);
  const rows = Math.min(size, Math.ceil((mercatorY(box.south) - mercatorY(box.north)) * size) + 1);
  return columns * rows;
}

/**
 * From zoom 16 on, features are exact locations (level null); the box is measured in cells of this
 * level (about 38 m): a box of at most GEO_MAX_CELLS of them (about 10 km across at the equator,
 * twice a full-HD window at zoom 16) keeps exact locations.
 */
const EXACT_LOCATIONS_LEVEL = 20;

/**
 * The cluster level to use for a box: the requested one when the box spans at most GEO_MAX_CELLS
 * of its cells, else the finest level that does.
 */
export function capClusterLevel(
  requested: number | null,
  box: Bounds,
  maxCells = GEO_MAX_CELLS,
): { level: number | null; capped: boolean } {
  if (cellsTouched(box, requested ?? EXACT_LOCATIONS_LEVEL) <= maxCells)
    return { level: requested, capped: false };
  let level = requested ?? EXACT_LOCATIONS_LEVEL;
  while (level > 0 && cellsTouched(box, level) > maxCells) level -= 1;
  return { level, capped: true };
}
