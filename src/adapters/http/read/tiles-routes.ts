import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { viewerOf } from '../viewer.ts';
import { Type } from 'typebox';
import { describeTiles } from '../../../application/read/describe-tiles.ts';
import { renderTile } from '../../../application/read/render-tile.ts';
import { TILE_MAX_ZOOM, TILE_VERSION_PARAMETER } from '../../../domain/read/tiles.ts';
import { setVersionTag } from '../http-caching.ts';
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

const TileQuery = Type.Object(
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

/** A tile at the version its URL names never changes: a year, and no revalidation. */
const IMMUTABLE = 'max-age=31536000, immutable';

/** Draws the tile of `coordinates` and answers it by its version's rule (render-tile.ts). */
async function sendTile(
  deps: TileRoutesDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  coordinates: { z: string; x: string; y: string },
): Promise<FastifyReply> {
  const viewer = viewerOf(request);
  const answer = await renderTile(deps, viewer, coordinates, request.query as RawQuery);
  if (answer.rule === 'moved') {
    const url = new URL(request.url, 'http://host');
    url.searchParams.set(TILE_VERSION_PARAMETER, answer.version);
    return reply.header('cache-control', 'no-cache').redirect(`${url.pathname}${url.search}`, 302);
  }
  // The tag from the data version (http-caching.ts): a 304 and a 204 carry it as a 200 does.
  setVersionTag(reply, answer.version);
  if (answer.rule === 'immutable')
    reply.header('cache-control', `${viewer ? 'private' : 'public'}, ${IMMUTABLE}`);
  const { tile } = answer;
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
        querystring: TileQuery,
        response: {
          200: {
            description: 'The tile.',
            content: { [MVT_CONTENT_TYPE]: { schema: { type: 'string', format: 'binary' } } },
          },
          204: { description: 'No event lies in the tile (with an ETag, cached as a tile).', type: 'null' },
          302: {
            description:
              'The URL names another data version than the current one: Location is the same tile at the current version.',
            type: 'null',
          },
          ...errorResponses(400, 500),
        },
      },
    },
    async (request, reply) => {
      const { z, x, y } = request.params as { z: string; x: string; y: string };
      return sendTile(deps, request, reply, { z, x, y: `${y}.mvt` });
    },
  );

  // Any other last segment (`0.png`, `0`): the same parser answers the 400 naming `y`. Left out of the
  // document, which has the one tile path.
  app.get(
    '/api/v1/tiles/:z/:x/:y',
    { schema: { hide: true, querystring: TileQuery } },
    async (request, reply) =>
      sendTile(deps, request, reply, request.params as { z: string; x: string; y: string }),
  );

  app.get(
    '/api/v1/tiles.json',
    {
      schema: {
        tags: ['events'],
        summary: 'TileJSON of the vector tiles',
        description:
          'A TileJSON 3.0.0 document for MapLibre and other map clients: the tile URL template (absolute, on the host the request ' +
          'reached, carrying the data version `v` and the filter parameters: tiles at such a URL are cached for a year, and a change ' +
          'in the data changes the URLs), zoom range, bounds and the fields of the `events` layer.',
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
            {
              additionalProperties: false,
              examples: [
                {
                  tilejson: '3.0.0',
                  name: 'Chronomap events',
                  description:
                    'The events of /api/v1 as vector tiles: clusters with their counts up to zoom 15, single events from zoom 16.',
                  scheme: 'xyz',
                  tiles: [
                    'https://chronomap.example.org/api/v1/tiles/{z}/{x}/{y}.mvt?v=12-3456&catalog=news',
                  ],
                  minzoom: 0,
                  maxzoom: 16,
                  bounds: [-180, -85.0511, 180, 85.0511],
                  center: [0, 0, 1],
                  vector_layers: [
                    {
                      id: 'events',
                      description:
                        'One point per cluster (`type` event-cluster) or single event (`type` event-point).',
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
          ),
          ...errorResponses(400, 500),
        },
      },
    },
    async (request) => describeTiles(deps, request.query as RawQuery, publicOrigin(request)),
  );
};
