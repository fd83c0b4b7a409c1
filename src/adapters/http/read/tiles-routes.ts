import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { viewerOf } from '../viewer.ts';
import { Type } from 'typebox';
import { describeTiles } from '../../../application/read/describe-tiles.ts';
import { renderTile } from '../../../application/read/render-tile.ts';
import { TILE_MAX_ZOOM } from '../../../domain/read/tiles.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import type { TileReader } from '../../../ports/read/tile-reader.ts';
import { errorResponses } from '../error-body.ts';
import { documented } from '../openapi-document.ts';
import { filterParameters } from './events-schemas.ts';
import { publicOrigin } from '../public-url.ts';

// Vector tiles of /api/v1 (docs/api-v1.md, "Vector tiles"): GET /api/v1/tiles/{z}/{x}/{y}.mvt and
// its TileJSON, GET /api/v1/tiles.json. Public like the rest of /api/v1; what a caller sees is the
// read model's visibility rule, as on /events/geo.

export type TileRoutesDeps = { tiles: TileReader };

const MVT_CONTENT_TYPE = 'application/vnd.mapbox-vector-tile';

const { bounds: _bounds, ...tileFilterParameters } = filterParameters;
const Query = Type.Object(tileFilterParameters, { additionalProperties: false });
// What the parser checks (tiles.ts#parseTile) is stated in the document only: Fastify hands it the text.
const TileParams = Type.Object({
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

function sendTile(reply: FastifyReply, tile: Uint8Array): FastifyReply {
  if (tile.length === 0) return reply.code(204).send();
  return reply.type(MVT_CONTENT_TYPE).send(Buffer.from(tile.buffer, tile.byteOffset, tile.byteLength));
}

export const v1TileRoutes: FastifyPluginAsync<TileRoutesDeps> = async (app, deps) => {
  // The path's last segment is `{y}.mvt`: Fastify gives `y` without the extension, the tile parser
  // reads `{y}.mvt` as before, so the answers are the same as when `y` carried it.
  app.get(
    '/api/v1/tiles/:z/:x/:y.mvt',
    {
      schema: {
        tags: ['events'],
        // The id it had when the path was `{y}` (with `.mvt` in it): generated clients keep their name.
        operationId: 'getV1TilesByZByXByY',
        summary: 'Vector tile of the events (MVT)',
        description:
          'A Mapbox Vector Tile (layer `events`) of the filtered events in tile z/x/y (XYZ scheme, Web Mercator): ' +
          'up to zoom 15 one point per cluster of /api/v1/events/geo at the same zoom (`type` event-cluster, `count`, `key`, `eventIds` ' +
          'when ten or fewer), from zoom 16 one per exact location (a single event is an `event-point` with `id` and `title`). The counts ' +
          'of the tiles covering a view add up to /api/v1/events/geo for it. 204 without a body when no event lies in the tile. ' +
          'A last path segment not ending in `.mvt` is a 400 naming `y`.',
        params: TileParams,
        querystring: Query,
        response: {
          200: {
            description: 'The tile.',
            content: { [MVT_CONTENT_TYPE]: { schema: { type: 'string', format: 'binary' } } },
          },
          204: { description: 'No event lies in the tile.', type: 'null' },
          ...errorResponses(400, 500),
        },
      },
    },
    async (request, reply) => {
      const { z, x, y } = request.params as { z: string; x: string; y: string };
      return sendTile(
        reply,
        await renderTile(deps, viewerOf(request), { z, x, y: `${y}.mvt` }, request.query as RawQuery),
      );
    },
  );

  // Any other last segment (`0.png`, `0`): the same parser answers the 400 naming `y`. Left out of the
  // document, which has the one tile path.
  app.get('/api/v1/tiles/:z/:x/:y', { schema: { hide: true } }, async (request, reply) =>
    sendTile(
      reply,
      await renderTile(
        deps,
        viewerOf(request),
        request.params as { z: string; x: string; y: string },
        request.query as RawQuery,
      ),
    ),
  );

  app.get(
    '/api/v1/tiles.json',
    {
      schema: {
        tags: ['events'],
        summary: 'TileJSON of the vector tiles',
        description:
          'A TileJSON 3.0.0 document for MapLibre and other map clients: the tile URL template (absolute, on the host the request ' +
          'reached, carrying the filter parameters), zoom range, bounds and the fields of the `events` layer.',
        querystring: Query,
        response: {
          200: Type.Object(
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
            { additionalProperties: false },
          ),
          ...errorResponses(400, 500),
        },
      },
    },
    async (request) => describeTiles(request.query as RawQuery, publicOrigin(request)),
  );
};
