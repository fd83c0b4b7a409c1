import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { type TSchema, Type } from 'typebox';
import { buildHistogram } from '../../../application/build-histogram.ts';
import { clusterEvents } from '../../../application/cluster-events.ts';
import { GEO_MAX_CELLS } from '../../../domain/geo-cap.ts';
import { countEventsBySource } from '../../../application/count-events-by-source.ts';
import { findEventExtent } from '../../../application/find-event-extent.ts';
import { inferDatasetSchema } from '../../../application/infer-dataset-schema.ts';
import { listDataSources } from '../../../application/list-data-sources.ts';
import { listEvents } from '../../../application/list-events.ts';
import { summariseClusterSizes } from '../../../application/summarise-cluster-sizes.ts';
import { summariseSources } from '../../../application/summarise-sources.ts';
import {
  DEFAULT_LIMIT,
  DEFAULT_SORT,
  DEFAULT_ZOOM,
  MAX_LIMIT,
  MAX_ZOOM,
  type RawQuery,
} from '../../../domain/read-query.ts';
import type { EventReader, Viewer } from '../../../ports/event-reader.ts';
import { errorResponses } from '../error-body.ts';

// The stable public read API, /api/v1, exactly in the spec's shapes. Parameters are declared here
// for the OpenAPI file and basic typing; their meaning and ranges are checked by the domain parser
// (src/domain/read-query.ts), which names the offending parameter in its 400.

export type ReadApiDeps = { events: EventReader };

/**
 * A body the database built as JSON text: sent as is, without the response serializer (the route's
 * response schema still documents it, and the integration tests check it).
 */
function sendJsonText(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}

/** `Cache-Control: no-cache` (or `no-store`), as a client sends it to bypass caches. */
function asksNoCache(request: FastifyRequest): boolean {
  const header = request.headers['cache-control'];
  return typeof header === 'string' && /(^|,)\s*no-(cache|store)\b/i.test(header);
}

/** Who is asking: set by the account hooks from the session cookie or bearer token (null: anonymous). */
function viewerOf(request: FastifyRequest): Viewer {
  return request.viewer ?? null;
}

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/**
 * `{type: ['object', 'null']}` rather than an anyOf: the response serializer then tells the two
 * apart by a null check instead of validating every value against each branch (hot on /events).
 */
const NullableObject = (properties: Record<string, TSchema>) =>
  Type.Unsafe<Record<string, unknown> | null>({
    type: ['object', 'null'],
    properties,
    required: Object.keys(properties),
    additionalProperties: false,
  });
const NullableNumber = Type.Unsafe<number | null>({ type: ['number', 'null'] });
const Timestamp = Type.String({ format: 'date-time' });

const BOUNDS_DESCRIPTION =
  'JSON `{"north":n,"south":s,"east":e,"west":w}` in degrees. `west > east` means the box crosses the antimeridian.';

const filterParameters = {
  catalog: Type.Optional(Type.String({ description: 'Catalog slug.' })),
  datasets: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Dataset slugs; repeat the parameter (`datasets=a&datasets=b`) or separate with commas.',
    }),
  ),
  bounds: Type.Optional(Type.String({ description: BOUNDS_DESCRIPTION })),
  startDate: Type.Optional(
    Type.String({ description: 'ISO 8601 date or date-time; events at or after it.' }),
  ),
  endDate: Type.Optional(
    Type.String({
      description: 'ISO 8601; events at or before it. A date without time includes that whole day (UTC).',
    }),
  ),
  dateField: Type.Optional(
    Type.String({
      description:
        'Which date startDate/endDate (and the histogram) use: `eventTimestamp` (default) or a custom date field ' +
        "`data.<field>` (see a dataset's `dateFields` in /api/v1/data-sources). Events whose field is missing or not a date do not match a date range.",
    }),
  ),
};

const Query = (properties: Record<string, TSchema>) =>
  Type.Object(properties, { additionalProperties: false });

// How the event was located (docs/ingestion.md, "Reading a geocoding result").
const LocatedBy = Type.Union(
  [
    Type.Object(
      { method: Type.Literal('coordinates') },
      { description: 'Located by its own coordinates (from the file or the API).' },
    ),
    Type.Object(
      {
        method: Type.Literal('geocoded'),
        address: Type.String({ description: 'The address that was looked up.' }),
        provider: Type.String({ description: '`offline-geonames`, or `nominatim:<url>` / `photon:<url>`.' }),
        matchedName: Type.Union([Type.String(), Type.Null()]),
        matchedCountry: Type.Union([Type.String(), Type.Null()], { description: 'ISO 3166-1 alpha-2.' }),
        matchedRegion: Type.Union([Type.String(), Type.Null()]),
        confidence: Type.Number({ minimum: 0, maximum: 1 }),
      },
      { description: 'Located by the geocoder from an address.' },
    ),
    Type.Null({ description: 'No location.' }),
  ],
  {
    description:
      'How the event was located: its own coordinates, the geocoder (with what it matched), or not at all.',
  },
);

const Event = Type.Object({
  id: Type.Number(),
  dataset: Type.Object({
    id: Type.Number(),
    title: Type.String(),
    catalog: Type.String({ description: 'Catalog slug.' }),
  }),
  data: Type.Object({}, { additionalProperties: true }),
  location: NullableObject({ longitude: Type.Number(), latitude: Type.Number() }),
  locatedBy: LocatedBy,
  eventTimestamp: Timestamp,
  isValid: Type.Boolean(),
});

const Pagination = Type.Object({
  page: Type.Number(),
  limit: Type.Number(),
  totalDocs: Type.Number(),
  totalPages: Type.Number(),
  hasNextPage: Type.Boolean(),
  hasPrevPage: Type.Boolean(),
  nextPage: NullableNumber,
  prevPage: NullableNumber,
});

const Feature = Type.Object({
  type: Type.Literal('Feature'),
  geometry: Type.Object({
    type: Type.Literal('Point'),
    coordinates: Type.Array(Type.Number(), {
      minItems: 2,
      maxItems: 2,
      description: '[longitude, latitude]',
    }),
  }),
  properties: Type.Object({
    id: Type.Union([Type.Number(), Type.String()]),
    type: Type.Union([Type.Literal('event-cluster'), Type.Literal('event-point')]),
    count: Type.Optional(Type.Number()),
    title: Type.Optional(Type.String()),
    eventIds: Type.Optional(Type.Array(Type.Number())),
  }),
});

const zoomParameter = Type.Optional(
  Type.Integer({
    default: DEFAULT_ZOOM,
    description:
      `0 to ${MAX_ZOOM}. ` +
      'Map zoom: 16 and deeper shows single events (identical locations still group); 10-15 clusters of about 100-1000 m; below 10 aggressive clustering.',
  }),
);
const bucketParameter = (description: string) =>
  Type.Optional(Type.Integer({ description: `1 to 500. ${description}` }));

/** What /api/v1/data-sources tells of a catalog and of a dataset alike. */
const sourceFields = {
  id: Type.Number(),
  slug: Type.String(),
  title: Type.String(),
  description: Nullable(Type.String()),
  eventCount: Type.Number(),
};

/** One GET route of the read API: its OpenAPI description and the use case that answers it. */
type ReadRoute = {
  path: string;
  tag: 'events' | 'sources';
  summary: string;
  description?: string;
  params?: TSchema;
  /** Query parameters; none besides these are accepted. */
  query: Record<string, TSchema>;
  /** The 200 body. */
  response: TSchema;
  /** Error statuses besides 200 (default 400 and 500), all with the spec's error body. */
  errors?: number[];
  /** The body: an object (serialised by the response schema) or JSON text the database built. */
  answer: (viewer: Viewer, query: RawQuery, request: FastifyRequest) => Promise<unknown>;
};

function readRoutes(deps: ReadApiDeps): ReadRoute[] {
  return [
    {
      path: '/api/v1/events',
      tag: 'events',
      summary: 'List events',
      description:
        'Filtered events, one page at a time. `sort` takes `id`, `eventTimestamp`, `isValid`, `dataset` or `data.<field>`, `-` for descending. ' +
        'A page asked again is answered from memory while nothing it shows has changed (checked against the database on every request, ' +
        'so a write is seen by the next request); `Cache-Control: no-cache` reads it from the database anyway.',
      query: {
        ...filterParameters,
        page: Type.Optional(Type.Integer({ default: 1, description: '1-indexed.' })),
        limit: Type.Optional(Type.Integer({ default: DEFAULT_LIMIT, description: `1 to ${MAX_LIMIT}.` })),
        sort: Type.Optional(Type.String({ default: DEFAULT_SORT })),
      },
      response: Type.Object({ events: Type.Array(Event), pagination: Pagination }),
      // `Cache-Control: no-cache` asks for an answer read from the database now, not a stored one
      // (stored ones are verified against the database anyway; see postgres/read-model/page-cache.ts).
      answer: (viewer, query, request) => listEvents(deps, viewer, query, { fresh: asksNoCache(request) }),
    },
    {
      path: '/api/v1/events/geo',
      tag: 'events',
      summary: 'Map clusters (GeoJSON)',
      description:
        'Clusters computed by the database on a Web Mercator grid. A single event is an `event-point` with its title; two or more events ' +
        '(in one cell, or at one exact location at zoom 16+) are an `event-cluster` with `count`, and `eventIds` when 10 or fewer. ' +
        'The counts of all features add up to `totalDocs` of /api/v1/events with the same filters.',
      query: {
        ...filterParameters,
        bounds: Type.String({ description: BOUNDS_DESCRIPTION }),
        zoom: zoomParameter,
      },
      response: Type.Object({
        type: Type.Literal('FeatureCollection'),
        capped: Type.Boolean({
          description: `True when the box spans more than ${GEO_MAX_CELLS} cells of the zoom's cluster level: the answer is clustered on a coarser level (at most ${GEO_MAX_CELLS} features).`,
        }),
        features: Type.Array(Feature),
      }),
      answer: (viewer, query) => clusterEvents(deps, viewer, query),
    },
    {
      path: '/api/v1/events/temporal',
      tag: 'events',
      summary: 'Temporal histogram',
      description:
        'Contiguous half-open buckets [date, dateEnd) from the first to the last matching event, empty ones included; counts add up to ' +
        '`metadata.total`. The bucket width is chosen from round sizes (1 s ... 100 years) to land within [minBuckets, maxBuckets], ' +
        'closest to targetBuckets. Alternatively `granularity` (day, week, month or auto) gives calendar-aligned UTC buckets ' +
        '(weeks start on Monday; `bucketSizeSeconds` is null for months).',
      query: {
        ...filterParameters,
        targetBuckets: bucketParameter('Default 30.'),
        minBuckets: bucketParameter('Default 20.'),
        maxBuckets: bucketParameter('Default 50.'),
        granularity: Type.Optional(
          Type.String({
            description: '`day`, `week`, `month` or `auto`; not combinable with the bucket parameters.',
          }),
        ),
      },
      response: Type.Object({
        histogram: Type.Array(Type.Object({ date: Timestamp, dateEnd: Timestamp, count: Type.Number() })),
        metadata: Type.Object({
          total: Type.Number(),
          dateRange: Type.Object({ min: Nullable(Timestamp), max: Nullable(Timestamp) }),
          bucketSizeSeconds: Nullable(Type.Number()),
          bucketCount: Type.Number(),
          counts: Type.Object({ datasets: Type.Number(), catalogs: Type.Number() }),
          topDatasets: Type.Array(Type.String(), {
            description: 'Titles of the datasets with most events (up to 5).',
          }),
          topCatalogs: Type.Array(Type.String(), {
            description: 'Titles of the catalogs with most events (up to 5).',
          }),
        }),
      }),
      answer: (viewer, query) => buildHistogram(deps, viewer, query),
    },
    {
      path: '/api/v1/events/stats',
      tag: 'events',
      summary: 'Event counts per catalog or dataset',
      query: {
        ...filterParameters,
        groupBy: Type.String({ description: '`catalog` or `dataset`.' }),
      },
      response: Type.Object({
        items: Type.Array(
          Type.Object({
            id: Type.Union([Type.Number(), Type.String()]),
            name: Type.String(),
            count: Type.Number(),
          }),
        ),
        total: Type.Number(),
        groupedBy: Type.Union([Type.Literal('catalog'), Type.Literal('dataset')]),
      }),
      answer: (viewer, query) => countEventsBySource(deps, viewer, query),
    },
    {
      path: '/api/v1/events/geo/stats',
      tag: 'events',
      summary: 'Cluster-size percentiles',
      description:
        'Breakpoints p20..p100 (p100 is the largest) of the sizes of the clusters /api/v1/events/geo gives for the same filters at `zoom` ' +
        '(default 10; the whole world when no bounds are given), for a map legend. All 0 when nothing matches.',
      query: { ...filterParameters, zoom: zoomParameter },
      response: Type.Object({
        p20: Type.Number(),
        p40: Type.Number(),
        p60: Type.Number(),
        p80: Type.Number(),
        p100: Type.Number(),
      }),
      answer: (viewer, query) => summariseClusterSizes(deps, viewer, query),
    },
    {
      path: '/api/v1/events/bounds',
      tag: 'events',
      summary: 'Extent of the filtered events',
      description:
        'The box around the matching events that have a location (null when none has), with the number of matching events ' +
        '(`count`, as totalDocs of /api/v1/events) and of located ones, so that a map can fit its view.',
      query: filterParameters,
      response: Type.Object({
        bounds: Nullable(
          Type.Object({
            north: Type.Number(),
            south: Type.Number(),
            east: Type.Number(),
            west: Type.Number(),
          }),
        ),
        count: Type.Number(),
        located: Type.Number(),
      }),
      answer: (viewer, query) => findEventExtent(deps, viewer, query),
    },
    {
      path: '/api/v1/sources/stats',
      tag: 'sources',
      summary: 'Event counts of every catalog and dataset',
      query: {},
      response: Type.Object({
        catalogCounts: Type.Record(Type.String(), Type.Number(), {
          description: 'Catalog id to event count.',
        }),
        datasetCounts: Type.Record(Type.String(), Type.Number(), {
          description: 'Dataset id to event count.',
        }),
        totalEvents: Type.Number(),
      }),
      answer: (viewer) => summariseSources(deps, viewer),
    },
    {
      path: '/api/v1/data-sources',
      tag: 'sources',
      summary: 'Catalogs and their datasets',
      description:
        'Every visible catalog with its datasets and event counts, as a map client needs them for its filter panel. ' +
        '`dateFields` are the custom date fields a dataset declares (`schema_settings.dateFields`), usable as `dateField=data.<field>`.',
      query: {},
      response: Type.Object({
        catalogs: Type.Array(
          Type.Object({
            ...sourceFields,
            datasets: Type.Array(Type.Object({ ...sourceFields, dateFields: Type.Array(Type.String()) })),
          }),
        ),
        totalEvents: Type.Number(),
      }),
      answer: (viewer) => listDataSources(deps, viewer),
    },
    {
      path: '/api/v1/datasets/:id/schema/infer',
      tag: 'sources',
      summary: "Inferred field types of a dataset's events",
      description:
        'Types found in the `data` of the newest `sampleSize` events (default 500, max 5000), per field path (`data.a.b`, nested ' +
        'objects up to three levels). A string in ISO 8601 form counts as `date`.',
      params: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
      query: {
        sampleSize: Type.Optional(Type.Integer({ description: '1 to 5000, default 500.' })),
      },
      response: Type.Object({
        dataset: Type.Object({ id: Type.Number(), slug: Type.String(), title: Type.String() }),
        sampleSize: Type.Number({ description: 'Events actually sampled.' }),
        totalEvents: Type.Number(),
        dateFields: Type.Array(Type.String()),
        fields: Type.Array(
          Type.Object({
            path: Type.String(),
            types: Type.Array(
              Type.Union(
                ['string', 'number', 'boolean', 'date', 'object', 'array', 'null'].map((name) =>
                  Type.Literal(name),
                ),
              ),
            ),
            present: Type.Number({ description: 'Sampled events that have the field.' }),
            examples: Type.Array(Type.Unknown()),
            declaredDate: Type.Boolean(),
          }),
        ),
      }),
      errors: [400, 404, 500],
      answer: (viewer, query, request) =>
        inferDatasetSchema(deps, viewer, (request.params as { id: number }).id, query),
    },
  ];
}

export const v1EventRoutes: FastifyPluginAsync<ReadApiDeps> = async (app, deps) => {
  for (const route of readRoutes(deps)) {
    app.get(
      route.path,
      {
        schema: {
          tags: [route.tag],
          summary: route.summary,
          ...(route.description ? { description: route.description } : {}),
          ...(route.params ? { params: route.params } : {}),
          querystring: Query(route.query),
          response: { 200: route.response, ...errorResponses(...(route.errors ?? [400, 500])) },
        },
      },
      async (request, reply) => {
        const body = await route.answer(viewerOf(request), request.query as RawQuery, request);
        return typeof body === 'string' ? sendJsonText(reply, body) : body;
      },
    );
  }
};
