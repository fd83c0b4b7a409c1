import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { viewerOf } from '../viewer.ts';
import { describeTiles } from '../../../application/read/describe-tiles.ts';
import { renderTile } from '../../../application/read/render-tile.ts';
import { TILE_VERSION_PARAMETER } from '../../../domain/read/tiles.ts';
import { setVersionTag } from '../http-caching.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import type { TileReader } from '../../../ports/read/tile-reader.ts';
import { errorResponses } from '../error-body.ts';
import { TileJson, TileJsonQuery, TileParams, TileQuery } from './tiles-schemas.ts';
import { publicOrigin } from '../public-url.ts';

// Vector tiles of /api/v1 (docs/api-v1.md, "Vector tiles"): GET /api/v1/tiles/{z}/{x}/{y}.mvt and
// its TileJSON, GET /api/v1/tiles.json. Public like the rest of /api/v1; what a caller sees is the
// read model's visibility rule, as on /events/geo.

export type TileRoutesDeps = { tiles: TileReader };

const MVT_CONTENT_TYPE = 'application/vnd.mapbox-vector-tile';

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
        querystring: TileJsonQuery,
        response: {
          200: TileJson,
          ...errorResponses(400, 500),
        },
      },
    },
    async (request) => describeTiles(deps, request.query as RawQuery, publicOrigin(request)),
  );
};
