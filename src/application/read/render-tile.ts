import { parseEventFilter, type RawQuery } from '../../domain/read/read-query.ts';
import { parseTile } from '../../domain/read/tiles.ts';
import type { Viewer } from '../../ports/read/event-reader.ts';
import type { TileReader } from '../../ports/read/tile-reader.ts';

/**
 * GET /api/v1/tiles/{z}/{x}/{y}.mvt: the vector tile of the filtered events, what /events/geo shows
 * at zoom z cut to the tile. The tile and the filter are checked before anything is read (a
 * ValidationError names the parameter); an empty result means that no event lies in the tile.
 */
export async function renderTile(
  deps: { tiles: TileReader },
  viewer: Viewer,
  coordinates: { z: unknown; x: unknown; y: unknown },
  query: RawQuery,
): Promise<Uint8Array> {
  const tile = parseTile(coordinates.z, coordinates.x, coordinates.y);
  const filter = parseEventFilter(query);
  return deps.tiles.vectorTile(viewer, filter, tile);
}
