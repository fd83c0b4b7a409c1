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
import {
  checkFormat,
  GEOJSON_TYPE,
  OGC_DEFAULT_LIMIT,
  OGC_MAX_LIMIT,
  refuseUnsupportedParameters,
  SCHEMA_TYPE,
} from '../../../domain/read/ogc.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import { errorResponses } from '../error-body.ts';
import { publicOrigin } from '../public-url.ts';
import {
  CollectionList,
  CollectionSchema,
  collectionId,
  Conformance,
  FeatureSchemaDocument,
  featureId,
  format,
  ItemsPage,
  itemsQuery,
  ItemWithLinks,
  LandingPage,
  Query,
  Queryables,
} from './ogc-schemas.ts';

// OGC API – Features, Part 1 Core + GeoJSON, under /ogc (docs/api-v1.md, "OGC API – Features").
// Public reads with the viewer's visibility, as /api/v1: anonymous callers see the public datasets.
// The TypeBox schemas (ogc-schemas.ts) document the parameters and refuse unknown ones (400,
// /req/core/query-param-unknown); their values are checked by src/domain/read/ogc.ts. Bodies are sent
// as JSON text, so the response schemas document them without dropping the events' free-form data.

const OGC_PREFIX = '/ogc';

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
      response: LandingPage,
      errors: [400],
      contentType: 'application/json',
      answer: (_request, base) => landingPage(base),
    },
    {
      path: `${OGC_PREFIX}/conformance`,
      summary: 'OGC API – Features conformance classes',
      response: Conformance,
      errors: [400],
      contentType: 'application/json',
      answer: () => conformance(),
    },
    {
      path: `${OGC_PREFIX}/collections`,
      summary: 'Collections: one per dataset the caller may read',
      response: CollectionList,
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
      query: itemsQuery,
      response: ItemsPage,
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
      response: Queryables,
      errors: [400, 404, 500],
      contentType: SCHEMA_TYPE,
      answer: (request, base) =>
        collectionDocument(deps, viewerOf(request), params(request).collectionId, base, 'queryables'),
    },
    {
      path: `${OGC_PREFIX}/collections/:collectionId/schema`,
      summary: "The JSON Schema of the collection's features (Part 5; its `describedby` link)",
      params: { collectionId },
      response: FeatureSchemaDocument,
      errors: [400, 404, 500],
      contentType: SCHEMA_TYPE,
      answer: (request, base) =>
        collectionDocument(deps, viewerOf(request), params(request).collectionId, base, 'schema'),
    },
    {
      path: `${OGC_PREFIX}/collections/:collectionId/items/:featureId`,
      summary: 'One feature (event) of a collection',
      params: { collectionId, featureId },
      response: ItemWithLinks,
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
