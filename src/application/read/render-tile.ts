import { parseEventFilter, type RawQuery } from '../../domain/read/read-query.ts';
import { parseTile, TILE_VERSION_PARAMETER, tileVersionRule } from '../../domain/read/tiles.ts';
import type { Viewer } from '../../ports/read/event-reader.ts';
import type { TileReader } from '../../ports/read/tile-reader.ts';

/** A tile drawn at data version `version`, or the version to send the client to instead (`moved`). */
type TileAnswer =
  | { rule: 'immutable' | 'revalidate'; tile: Uint8Array; version: string }
  | { rule: 'moved'; version: string };

/**
 * GET /api/v1/tiles/{z}/{x}/{y}.mvt: the vector tile of the filtered events, what /events/geo shows
 * at zoom z cut to the tile. The tile and the filter are checked before anything is read (a
 * ValidationError names the parameter); an empty tile means that no event lies in it. The data
 * version is read before the tile, so a tile is never older than the version it is served under;
 * a URL at another version than the current one is not drawn (tileVersionRule).
 */
export async function renderTile(
  deps: { tiles: TileReader },
  viewer: Viewer,
  coordinates: { z: unknown; x: unknown; y: unknown },
  query: RawQuery,
): Promise<TileAnswer> {
  const tile = parseTile(coordinates.z, coordinates.x, coordinates.y);
  const filter = parseEventFilter(query);
  const version = await deps.tiles.dataVersion();
  const rule = tileVersionRule(query[TILE_VERSION_PARAMETER], version);
  if (rule === 'moved') return { rule, version };
  return { rule, tile: await deps.tiles.vectorTile(viewer, filter, tile), version };
}
