import type { EventFilter } from '../../domain/read/read-query.ts';
import type { Tile } from '../../domain/read/tiles.ts';
import type { Viewer } from './event-reader.ts';

// Vector tiles of the read model (GET /api/v1/tiles/{z}/{x}/{y}.mvt): what a viewer may see, as
// /api/v1/events/geo shows it, cut into Web Mercator tiles.

export interface TileReader {
  /**
   * The Mapbox Vector Tile (one layer, `events`) of the filtered events in the tile: clusters with
   * their counts at the zoom's grid level, single events with their id and title. Empty when the
   * tile holds no event. The filter's bounds are ignored: the tile is the box.
   */
  vectorTile(viewer: Viewer, filter: EventFilter, tile: Tile): Promise<Uint8Array>;
  /**
   * The data version every tile is drawn at: it changes with any committed change to events,
   * datasets or catalogs (the read model's data signature), so a tile URL that carries it names
   * one content for good (docs/api-v1.md, "Vector tiles").
   */
  dataVersion(): Promise<string>;
}
