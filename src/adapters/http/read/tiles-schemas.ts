import { Type } from 'typebox';
import { TILE_MAX_ZOOM, TILE_VERSION_PARAMETER } from '../../../domain/read/tiles.ts';
import { documented } from '../openapi-document.ts';
import { filterParameters } from './events-schemas.ts';

// The schemas of the vector tiles of /api/v1 (tiles-routes.ts has the routes): the tile's path and
// query, and the TileJSON document. The filters are /api/v1's, without `bounds` (the tile is the box).

const { bounds: _bounds, ...tileFilterParameters } = filterParameters;
export const TileJsonQuery = Type.Object(tileFilterParameters, { additionalProperties: false });
// What the parser checks (tiles.ts#parseTile) is stated in the document only: Fastify hands it the text.
export const TileParams = Type.Object({
  z: Type.String({
    description: `Zoom, 0 to ${TILE_MAX_ZOOM}.`,
    ...documented({ type: 'integer', minimum: 0, maximum: TILE_MAX_ZOOM }),
  }),
  x: Type.String({ description: 'Column, 0 to 2^z - 1.', ...documented({ type: 'integer', minimum: 0 }) }),
  y: Type.String({
    description: 'Row, 0 to 2^z - 1 (the path segment is `{y}.mvt`, e.g. `5.mvt`).',
    ...documented({ type: 'integer', minimum: 0 }),
  }),
});

export const TileQuery = Type.Object(
  {
    ...tileFilterParameters,
    [TILE_VERSION_PARAMETER]: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'The data version the TileJSON put in the URL. At the current version the tile is sent `Cache-Control: public, ' +
          'max-age=31536000, immutable` (it never changes); at another one the answer is a 302 to the same tile at the current ' +
          'version. Without it: revalidated like the rest of /api/v1.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TileJson = Type.Object(
  {
    tilejson: Type.Literal('3.0.0'),
    name: Type.String(),
    description: Type.String(),
    scheme: Type.Literal('xyz'),
    tiles: Type.Array(Type.String()),
    minzoom: Type.Integer(),
    maxzoom: Type.Integer(),
    bounds: Type.Array(Type.Number(), { minItems: 4, maxItems: 4 }),
    center: Type.Array(Type.Number(), { minItems: 3, maxItems: 3 }),
    vector_layers: Type.Array(
      Type.Object({
        id: Type.String(),
        description: Type.String(),
        minzoom: Type.Integer(),
        maxzoom: Type.Integer(),
        fields: Type.Record(Type.String(), Type.String()),
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        tilejson: '3.0.0',
        name: 'Chronomap events',
        description:
          'The events of /api/v1 as vector tiles: clusters with their counts up to zoom 15, single events from zoom 16.',
        scheme: 'xyz',
        tiles: ['https://chronomap.example.org/api/v1/tiles/{z}/{x}/{y}.mvt?v=12-3456&catalog=news'],
        minzoom: 0,
        maxzoom: 16,
        bounds: [-180, -85.0511, 180, 85.0511],
        center: [0, 0, 1],
        vector_layers: [
          {
            id: 'events',
            description: 'One point per cluster (`type` event-cluster) or single event (`type` event-point).',
            minzoom: 0,
            maxzoom: 16,
            fields: {
              type: 'String: event-cluster or event-point',
              count: 'Number: events in the feature',
            },
          },
        ],
      },
    ],
  },
);
