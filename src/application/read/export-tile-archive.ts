import { DomainError } from '../../domain/errors.ts';
import type { Bounds, EventFilter } from '../../domain/read/read-query.ts';
import { type Tile, tileBounds } from '../../domain/read/tiles.ts';
import type { ArchiveTile } from '../../ports/read/export-files.ts';
import type { Viewer } from '../../ports/read/event-reader.ts';
import type { TileReader } from '../../ports/read/tile-reader.ts';

// The tiles of a PMTiles archive of a view (GET /api/v1/events.pmtiles, docs/api-v1.md "Exports"):
// every non-empty vector tile of zooms 0..TILE_ARCHIVE_MAX_ZOOM, each drawn by the tile renderer of
// /api/v1/tiles (TileReader.vectorTile), so a tile of the archive has the bytes /api/v1/tiles gives
// for the same view at the same data version.
//
// The pyramid is walked from the top: a tile's four children are drawn only when it holds an event,
// since an event lies in exactly one tile of each zoom (domain/read/tiles.ts), so an empty tile has
// empty children. The number of tiles is capped: every non-empty tile has at least one non-empty
// child, so after a zoom of n tiles the archive will hold at least n more per remaining zoom, and a
// view that would pass the cap is refused as soon as that bound passes it, before the deeper zooms
// are drawn.

/** Deepest zoom of an archive: a map client over-zooms its tiles past it (the cells of zoom 12 are ~10 km). */
export const TILE_ARCHIVE_MAX_ZOOM = 12;
/** Most tiles an archive holds by default (EXPORT_PMTILES_MAX_TILES). */
export const TILE_ARCHIVE_MAX_TILES = 20_000;
/** Tiles drawn at once: each is one statement. */
const PARALLEL_TILES = 4;

function intersects(tile: Tile, bounds: Bounds | null): boolean {
  // A box across the antimeridian (west > east) is not narrowed: every tile is kept.
  if (!bounds || bounds.west > bounds.east) return true;
  const box = tileBounds(tile);
  return (
    box.west <= bounds.east &&
    box.east >= bounds.west &&
    box.south <= bounds.north &&
    box.north >= bounds.south
  );
}

const children = (tile: Tile): Tile[] =>
  [0, 1, 2, 3].map((i) => ({ z: tile.z + 1, x: tile.x * 2 + (i % 2), y: tile.y * 2 + Math.floor(i / 2) }));

/** The rule of the cap: refused when the tiles drawn plus the least the deeper zooms will add pass it. */
function tileArchiveOverCap(drawn: number, lastZoomTiles: number, zoomsLeft: number, cap: number): boolean {
  return drawn + lastZoomTiles * zoomsLeft > cap;
}

/**
 * The non-empty tiles of the view, zoom by zoom (the filter's box, when it has one, narrows which
 * tiles are walked; each tile holds what /api/v1/tiles gives for it). A view whose archive would pass
 * `maxTiles` tiles is a 400 TILE_ARCHIVE_TOO_LARGE naming the cap. A view with no located event (or
 * none the viewer may see) gives its empty zoom-0 tile alone: a PMTiles archive holds at least one
 * tile, and an empty view is an empty file in every format, not an error.
 */
export async function viewTiles(
  tiles: TileReader,
  viewer: Viewer,
  filter: EventFilter,
  limits: { maxZoom: number; maxTiles: number },
): Promise<ArchiveTile[]> {
  const drawn: ArchiveTile[] = [];
  let level: Tile[] = [{ z: 0, x: 0, y: 0 }];
  for (let z = 0; z <= limits.maxZoom && level.length > 0; z += 1) {
    const found: ArchiveTile[] = [];
    for (let start = 0; start < level.length; start += PARALLEL_TILES) {
      const batch = level.slice(start, start + PARALLEL_TILES);
      const data = await Promise.all(batch.map((tile) => tiles.vectorTile(viewer, filter, tile)));
      batch.forEach((tile, index) => {
        const bytes = data[index];
        if (bytes && (bytes.length > 0 || tile.z === 0)) found.push({ ...tile, data: bytes });
      });
    }
    drawn.push(...found);
    if (tileArchiveOverCap(drawn.length, found.length, limits.maxZoom - z, limits.maxTiles))
      throw new DomainError(
        'validation',
        `This view needs more than ${limits.maxTiles} tiles for zooms 0 to ${limits.maxZoom} (the cap of a ` +
          `PMTiles export); narrow it (a dataset, a time range or a bbox) or use /api/v1/tiles`,
        { code: 'TILE_ARCHIVE_TOO_LARGE' },
      );
    level = found
      .filter((tile) => tile.data.length > 0)
      .flatMap((tile) => children(tile))
      .filter((tile) => intersects(tile, filter.bounds));
  }
  return drawn;
}
