import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { viewerOf } from '../viewer.ts';
import { type TSchema, Type } from 'typebox';
import {
  collectionDocument,
  conformance,
  describeCollection,
  getItem,
  landingPage,
  listCollections,
  listItems,
  type OgcDeps,
} from '../../../application/read/ogc-features.ts';
import { CQL_LIMITS } from '../../../domain/read/cql2-tree.ts';
import {
  checkFormat,
  CRS84,
  GEOJSON_TYPE,
  OGC_DEFAULT_LIMIT,
  OGC_MAX_LIMIT,
  refuseUnsupportedParameters,
  SCHEMA_TYPE,
} from '../../../domain/read/ogc.ts';
import { MAX_PAGE_OFFSET } from '../../../domain/read/page-depth.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import { errorResponses } from '../error-body.ts';
import { documented } from '../openapi-document.ts';
import { publicOrigin } from '../public-url.ts';

// OGC API – Features, Part 1 Core + GeoJSON, under /ogc (docs/api-v1.md, "OGC API – Features").
// Public reads with the viewer's visibility, as /api/v1: anonymous callers see the public datasets.
// The TypeBox schemas document the parameters and refuse unknown ones (400,
// /req/core/query-param-unknown); their values are checked by src/domain/read/ogc.ts. Bodies are sent
// as JSON text, so the response schemas document them without dropping the events' free-form data.

const OGC_PREFIX = '/ogc';

const Query = (properties: Record<string, TSchema>) =>
  Type.Object(properties, { additionalProperties: false });

const format = {
  f: Type.Optional(
    Type.String({ description: 'Encoding: `json` (GeoJSON for features). `html` is not offered (400).' }),
  ),
};

const Link = Type.Object({
  href: Type.String(),
  rel: Type.String(),
  type: Type.String(),
  title: Type.Optional(Type.String()),
});
const Links = Type.Array(Link);

const FeatureSchema = Type.Object({
  type: Type.Literal('Feature'),
  id: Type.Integer({ description: 'The event id.' }),
  geometry: Type.Union([
    Type.Object({
      type: Type.Literal('Point'),
      coordinates: Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }),
    }),
    Type.Null(),
  ]),
  properties: Type.Object({
    eventTimestamp: Type.String({ format: 'date-time' }),
    dataset: Type.String({ description: 'Dataset slug (the collection id).' }),
    catalog: Type.String({ description: 'Catalog slug.' }),
    data: Type.Object({}, { additionalProperties: true, description: "The event's data." }),
  }),
});

const CollectionSchema = Type.Object({
  id: Type.String({ description: 'The dataset slug.' }),
  title: Type.String(),
  description: Type.Optional(Type.String()),
  links: Links,
  extent: Type.Optional(
    Type.Object({
      spatial: Type.Optional(
        Type.Object({ bbox: Type.Array(Type.Array(Type.Number())), crs: Type.String() }),
      ),
      temporal: Type.Optional(
        Type.Object({
          interval: Type.Array(Type.Array(Type.Union([Type.String(), Type.Null()]))),
          trs: Type.String(),
        }),
      ),
    }),
  ),
  itemType: Type.Literal('feature'),
  crs: Type.Array(Type.String()),
});

const collectionId = Type.String({ description: 'A dataset slug.' });

/** The items page's example in the OpenAPI document: one feature of two, and the next link. */
const ITEMS_EXAMPLE = {
  type: 'FeatureCollection',
  features: [
    {
      type: 'Feature',
      id: 1042,
      geometry: { type: 'Point', coordinates: [13.405, 52.52] },
      properties: {
        eventTimestamp: '2024-05-01T12:00:00.000Z',
        dataset: 'earthquakes',
        catalog: 'usgs',
        data: { mag: 4.2, place: 'Berlin' },
      },
    },
  ],
  links: [
    {
      href: 'https://chronomap.example.org/ogc/collections/earthquakes/items?limit=1',
      rel: 'self',
      type: 'application/geo+json',
    },
    {
      href: 'https://chronomap.example.org/ogc/collections/earthquakes/items?limit=1&offset=1',
      rel: 'next',
      type: 'application/geo+json',
    },
  ],
  numberMatched: 2,
  numberReturned: 1,
};

/**
 * A JSON Schema document (queryables, feature schema), with an example. Its `$schema` and `$id` are not
 * declared here: the OpenAPI generator would take them for the schema's own identifiers.
 */
const SchemaDocument = (example: Record<string, unknown>) =>
  Type.Object(
    {
      type: Type.Literal('object'),
      title: Type.String(),
      properties: Type.Record(Type.String(), Type.Object({}, { additionalProperties: true })),
    },
    {
      additionalProperties: true,
      description: 'A JSON Schema (2020-12) document with `$schema` and `$id`.',
      examples: [example],
    },
  );

/** Part 3's parameters of the items (src/domain/read/ogc-filter.ts). */
const filterParameters = {
  filter: Type.Optional(
    Type.String({
      maxLength: CQL_LIMITS.length,
      description:
        'A CQL2 filter over the queryables (`/collections/{id}/queryables`): comparisons, and/or/not, between, in, ' +
        'like, isNull, s_intersects with a POINT, POLYGON or BBOX, t_intersects with eventTimestamp. An unknown ' +
        'property answers 400.',
      examples: ['mag >= 4.5 AND S_INTERSECTS(geometry, BBOX(5, 45, 15, 55))'],
    }),
  ),
  'filter-lang': Type.Optional(
    Type.Union([Type.Literal('cql2-text'), Type.Literal('cql2-json')], {
      description: 'The encoding of `filter`, default cql2-text.',
    }),
  ),
  'filter-crs': Type.Optional(
    Type.Literal(CRS84, { description: 'The CRS of the geometries of `filter`: only CRS84.' }),
  ),
};

type OgcRoute = {
  path: string;
  summary: string;
  description?: string;
  params?: Record<string, TSchema>;
  query?: Record<string, TSchema>;
  response: TSchema;
  errors: number[];
  contentType: string;
  /** Its cost grows with the data: it takes a place of the `reads` class (http/concurrency-limit.ts). */
  costly?: boolean;
  /** A page of features: counted in rows, not requests (config/quotas.yaml pagedRows). */
  paged?: boolean;
  answer: (request: FastifyRequest, base: string) => unknown;
};

/** The absolute URL of the landing page (the standard's links are absolute): public-url.ts decides the origin. */
function baseUrl(request: FastifyRequest): string {
  return `${publicOrigin(request)}${OGC_PREFIX}`;
}

function ogcRoutes(deps: OgcDeps): OgcRoute[] {
  const params = (request: FastifyRequest) => request.params as { collectionId: string; featureId: string };
  return [
    {
      path: OGC_PREFIX,
      summary: 'OGC API – Features landing page',
      response: Type.Object({ title: Type.String(), description: Type.String(), links: Links }),
      errors: [400],
      contentType: 'application/json',
      answer: (_request, base) => landingPage(base),
    },
    {
      path: `${OGC_PREFIX}/conformance`,
      summary: 'OGC API – Features conformance classes',
      response: Type.Object({ conformsTo: Type.Array(Type.String()) }),
      errors: [400],
      contentType: 'application/json',
      answer: () => conformance(),
    },
    {
      path: `${OGC_PREFIX}/collections`,
      summary: 'Collections: one per dataset the caller may read',
      response: Type.Object({ links: Links, collections: Type.Array(CollectionSchema) }),
      errors: [400, 500],
      contentType: 'application/json',
      answer: (request, base) => listCollections(deps, viewerOf(request), base),
    },
    {
      path: `${OGC_PREFIX}/collections/:collectionId`,
      summary: 'A collection with its spatial and temporal extent',
      params: { collectionId },
      response: CollectionSchema,
      errors: [400, 404, 500],
      contentType: 'application/json',
      answer: (request, base) =>
        describeCollection(deps, viewerOf(request), params(request).collectionId, base),
    },
    {
      path: `${OGC_PREFIX}/collections/:collectionId/items`,
      summary: "A page of a collection's features (events), ordered by id",
      description:
        'GeoJSON FeatureCollection with `numberMatched`, `numberReturned` and `next`/`prev` links (no `timeStamp`: the ' +
        'answer depends on the data alone, so its ETag holds until the data changes). ' +
        "Each feature carries the dataset's fields as typed top-level properties beside `data` (docs/api-v1.md, " +
        '"Typed properties"). `filter` takes CQL2 (Part 3). Other parameters of OGC API – Features (crs, bbox-crs, ' +
        'sortby, properties, ...) answer 400 naming them.',
      params: { collectionId },
      query: {
        limit: Type.Optional(
          Type.Integer({
            minimum: 1,
            default: OGC_DEFAULT_LIMIT,
            description:
              `Items per page, default ${OGC_DEFAULT_LIMIT}; above ${OGC_MAX_LIMIT} it is clamped to ${OGC_MAX_LIMIT} (not refused, as ` +
              'the standard asks). A page costs its limit in rows of the rate limit (at least 10): docs/api-v1.md, "Rate limits".',
            // The document states the cap; the server clamps beyond it instead of refusing.
            ...documented({ maximum: OGC_MAX_LIMIT }),
          }),
        ),
        offset: Type.Optional(
          Type.Integer({
            minimum: 0,
            description:
              `Items to skip, a multiple of limit, at most ${MAX_PAGE_OFFSET} (the next and prev links carry it; ` +
              'deeper, the next link carries a cursor). Not with `cursor`.',
          }),
        ),
        cursor: Type.Optional(
          Type.String({
            maxLength: 256,
            description:
              'Opaque: the position after the last item of the page before, as the next link carries it past the depth ' +
              '`offset` reaches.',
          }),
        ),
        bbox: Type.Optional(
          Type.String({
            description:
              'minLon,minLat,maxLon,maxLat in CRS84; minLon > maxLon crosses the antimeridian. 6 numbers (3D) and an empty ' +
              '`bbox=` answer 400.',
          }),
        ),
        datetime: Type.Optional(
          Type.String({
            description:
              'An instant (a date: that UTC day), a closed interval `a/b` (both ends included) or a half-bounded one `../b`, `a/..`.',
          }),
        ),
        ...filterParameters,
      },
      response: Type.Object(
        {
          type: Type.Literal('FeatureCollection'),
          features: Type.Array(FeatureSchema),
          links: Links,
          numberMatched: Type.Integer(),
          numberReturned: Type.Integer(),
        },
        { examples: [ITEMS_EXAMPLE] },
      ),
      errors: [400, 404, 500],
      contentType: GEOJSON_TYPE,
      costly: true,
      paged: true,
      answer: (request, base) =>
        listItems(deps, viewerOf(request), params(request).collectionId, request.query as RawQuery, base),
    },
    {
      path: `${OGC_PREFIX}/collections/:collectionId/queryables`,
      summary: 'The properties a filter of the collection may name (Part 3), as a JSON Schema',
      params: { collectionId },
      response: SchemaDocument({
        type: 'object',
        title: 'Earthquakes: queryables',
        properties: {
          geometry: { format: 'geometry-point' },
          id: { type: 'integer' },
          eventTimestamp: { type: 'string', format: 'date-time' },
          mag: { title: 'mag', type: 'number' },
        },
        additionalProperties: false,
      }),
      errors: [400, 404, 500],
      contentType: SCHEMA_TYPE,
      answer: (request, base) =>
        collectionDocument(deps, viewerOf(request), params(request).collectionId, base, 'queryables'),
    },
    {
      path: `${OGC_PREFIX}/collections/:collectionId/schema`,
      summary: "The JSON Schema of the collection's features (Part 5; its `describedby` link)",
      params: { collectionId },
      response: SchemaDocument({
        type: 'object',
        title: 'Earthquakes',
        properties: {
          id: { type: 'integer', 'x-ogc-role': 'id' },
          eventTimestamp: { type: 'string', format: 'date-time', 'x-ogc-role': 'primary-instant' },
          mag: { title: 'mag', type: 'number' },
          data: { type: 'object' },
        },
      }),
      errors: [400, 404, 500],
      contentType: SCHEMA_TYPE,
      answer: (request, base) =>
        collectionDocument(deps, viewerOf(request), params(request).collectionId, base, 'schema'),
    },
    {
      path: `${OGC_PREFIX}/collections/:collectionId/items/:featureId`,
      summary: 'One feature (event) of a collection',
      params: { collectionId, featureId: Type.String({ description: 'The event id.' }) },
      response: Type.Intersect([FeatureSchema, Type.Object({ links: Links })]),
      errors: [400, 404, 500],
      contentType: GEOJSON_TYPE,
      answer: (request, base) =>
        getItem(deps, viewerOf(request), params(request).collectionId, params(request).featureId, base),
    },
  ];
}

export const ogcFeatureRoutes: FastifyPluginAsync<OgcDeps> = async (app, deps) => {
  for (const route of ogcRoutes(deps)) {
    app.get(
      route.path,
      {
        schema: {
          tags: ['ogc'],
          summary: route.summary,
          ...(route.description ? { description: route.description } : {}),
          ...(route.params ? { params: Type.Object(route.params) } : {}),
          querystring: Query({ ...format, ...route.query }),
          response: { 200: route.response, ...errorResponses(...route.errors) },
        },
        // Counted against the caller's request rate limit, as /api/v1 (src/adapters/http/rate-limit.ts).
        config: {
          rateLimit: true,
          ...(route.costly ? { costly: 'reads' as const } : {}),
          ...(route.paged ? { pagedRows: { defaultLimit: OGC_DEFAULT_LIMIT, maxLimit: OGC_MAX_LIMIT } } : {}),
        },
        // Before the schema's "unknown parameter": a parameter of another part of the standard is
        // named as such (src/domain/read/ogc.ts).
        preValidation: async (request: FastifyRequest) => {
          refuseUnsupportedParameters(request.query as RawQuery);
          checkFormat((request.query as RawQuery).f);
        },
      },
      async (request: FastifyRequest, reply: FastifyReply) => {
        const body = await route.answer(request, baseUrl(request));
        return reply.type(route.contentType).send(JSON.stringify(body));
      },
    );
  }
};
