import { type TSchema, Type } from 'typebox';
import { CQL_LIMITS } from '../../../domain/read/cql2-tree.ts';
import { CRS84, OGC_DEFAULT_LIMIT, OGC_MAX_LIMIT } from '../../../domain/read/ogc.ts';
import { MAX_PAGE_OFFSET } from '../../../domain/read/page-depth.ts';
import { documented } from '../openapi-document.ts';

// The schemas of OGC API – Features under /ogc (ogc-routes.ts has the routes): the parameters, which
// refuse unknown ones (400, /req/core/query-param-unknown), and the bodies as the document states them.

export const Query = (properties: Record<string, TSchema>) =>
  Type.Object(properties, { additionalProperties: false });

export const format = {
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

export const CollectionSchema = Type.Object({
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

export const collectionId = Type.String({ description: 'A dataset slug.' });

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

export const featureId = Type.String({ description: 'The event id.' });

export const LandingPage = Type.Object({ title: Type.String(), description: Type.String(), links: Links });
export const Conformance = Type.Object({ conformsTo: Type.Array(Type.String()) });
export const CollectionList = Type.Object({ links: Links, collections: Type.Array(CollectionSchema) });

/** The items page's parameters: paging, bbox, datetime and Part 3's filter. */
export const itemsQuery: Record<string, TSchema> = {
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
};

export const ItemsPage = Type.Object(
  {
    type: Type.Literal('FeatureCollection'),
    features: Type.Array(FeatureSchema),
    links: Links,
    numberMatched: Type.Integer(),
    numberReturned: Type.Integer(),
  },
  { examples: [ITEMS_EXAMPLE] },
);

export const Queryables = SchemaDocument({
  type: 'object',
  title: 'Earthquakes: queryables',
  properties: {
    geometry: { format: 'geometry-point' },
    id: { type: 'integer' },
    eventTimestamp: { type: 'string', format: 'date-time' },
    mag: { title: 'mag', type: 'number' },
  },
  additionalProperties: false,
});

export const FeatureSchemaDocument = SchemaDocument({
  type: 'object',
  title: 'Earthquakes',
  properties: {
    id: { type: 'integer', 'x-ogc-role': 'id' },
    eventTimestamp: { type: 'string', format: 'date-time', 'x-ogc-role': 'primary-instant' },
    mag: { title: 'mag', type: 'number' },
    data: { type: 'object' },
  },
});

export const ItemWithLinks = Type.Intersect([FeatureSchema, Type.Object({ links: Links })]);
