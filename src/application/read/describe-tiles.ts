import { parseEventFilter, type RawQuery } from '../../domain/read/read-query.ts';
import { TILE_LAYER, TILE_SOURCE_MAX_ZOOM, TILE_VERSION_PARAMETER } from '../../domain/read/tiles.ts';
import type { TileReader } from '../../ports/read/tile-reader.ts';

// GET /api/v1/tiles.json: the TileJSON 3.0.0 document of the vector tiles for a filter, which a map
// client (MapLibre's `source: {type: 'vector', url}`) reads to find the tiles and their fields.

/** The filter parameters a tile URL carries (the /events/geo ones but bounds: a tile is its own box). */
const TILE_FILTER_PARAMETERS = ['catalog', 'datasets', 'startDate', 'endDate', 'dateField'] as const;

/** Web Mercator's latitude limit, the edge of the tiles. */
const MERCATOR_LATITUDE = 85.0511;

type TileJson = {
  tilejson: '3.0.0';
  name: string;
  description: string;
  scheme: 'xyz';
  tiles: string[];
  minzoom: number;
  maxzoom: number;
  bounds: [number, number, number, number];
  center: [number, number, number];
  vector_layers: Array<{
    id: string;
    description: string;
    minzoom: number;
    maxzoom: number;
    fields: Record<string, string>;
  }>;
};

/**
 * The TileJSON of the tiles of a filter, with `tiles` the URL template under `origin` (scheme and
 * host of the service, as the client reached it) carrying the data version `v` (TileReader's
 * dataVersion: the tiles at such a URL never change, so they are cached for a year; a change in the
 * data gives new URLs) and the filter's parameters. The filter is checked first: a bad one is the
 * same 400 the tiles would give.
 */
export async function describeTiles(
  deps: { tiles: TileReader },
  query: RawQuery,
  origin: string,
): Promise<TileJson> {
  parseEventFilter(query);
  const search = new URLSearchParams({ [TILE_VERSION_PARAMETER]: await deps.tiles.dataVersion() });
  for (const name of TILE_FILTER_PARAMETERS) {
    const value = query[name];
    for (const item of Array.isArray(value) ? value : [value])
      if (typeof item === 'string' && item !== '') search.append(name, item);
  }
  const suffix = `?${search.toString()}`;
  return {
    tilejson: '3.0.0',
    name: 'Chronomap events',
    description:
      'The events of /api/v1 as vector tiles: clusters with their counts up to zoom 15, single events from zoom 16.',
    scheme: 'xyz',
    tiles: [`${origin}/api/v1/tiles/{z}/{x}/{y}.mvt${suffix}`],
    minzoom: 0,
    maxzoom: TILE_SOURCE_MAX_ZOOM,
    bounds: [-180, -MERCATOR_LATITUDE, 180, MERCATOR_LATITUDE],
    center: [0, 0, 1],
    vector_layers: [
      {
        id: TILE_LAYER,
        description:
          'One point per cluster (`type` event-cluster) or single event (`type` event-point); the counts of the tiles covering a view add up to its /api/v1/events/geo counts.',
        minzoom: 0,
        maxzoom: TILE_SOURCE_MAX_ZOOM,
        fields: {
          type: 'String: event-cluster or event-point',
          count: 'Number: events in the feature (1 for an event-point)',
          id: 'Number: the event id (event-point only)',
          title: 'String: the event title (event-point only)',
          key: 'String: the cluster id, as in /api/v1/events/geo (event-cluster only)',
          eventIds: 'String: comma-separated event ids of a cluster of ten or fewer (event-cluster only)',
        },
      },
    ],
  };
}
