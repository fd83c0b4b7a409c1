import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { viewerOf } from '../viewer.ts';
import { type Static, type TSchema, Type } from 'typebox';
import { buildHistogram } from '../../../application/read/build-histogram.ts';
import { clusterEvents } from '../../../application/read/cluster-events.ts';
import { GEO_MAX_CELLS } from '../../../domain/read/geo-cap.ts';
import { MAX_EVENT_IDS } from '../../../domain/read/clustering.ts';
import { countEventsBySource } from '../../../application/read/count-events-by-source.ts';
import { findEventExtent } from '../../../application/read/find-event-extent.ts';
import { inferDatasetSchema } from '../../../application/collections/infer-dataset-schema.ts';
import { listDataSources } from '../../../application/read/list-data-sources.ts';
import { listEvents } from '../../../application/read/list-events.ts';
import { summariseClusterSizes } from '../../../application/read/summarise-cluster-sizes.ts';
import { summariseSources } from '../../../application/read/summarise-sources.ts';
import {
  DEFAULT_LIMIT,
  DEFAULT_SORT,
  DEFAULT_ZOOM,
  MAX_LIMIT,
  MAX_ZOOM,
  type RawQuery,
} from '../../../domain/read/read-query.ts';
import { EVENT_SORT_FIELDS } from '../../../domain/read/sort.ts';
import { MAX_BUCKETS } from '../../../domain/read/histogram.ts';
import type { EventExporter } from '../../../ports/read/event-exporter.ts';
import type { EventReader, Viewer } from '../../../ports/read/event-reader.ts';
import { errorResponses } from '../error-body.ts';
import { setVersionTag } from '../http-caching.ts';
import { documented } from '../openapi-document.ts';
import { MAX_SLUG_LENGTH, SLUG_PATTERN } from '../../../domain/collections/slugs.ts';

// The stable public read API, /api/v1, exactly in the spec's shapes. Parameters are declared here
// for the OpenAPI file and basic typing; their meaning and ranges are checked by the domain parser
// (src/domain/read/read-query.ts), which names the offending parameter in its 400. Integer ranges are
// also in the schemas (the same ranges: Fastify refuses exactly what the parser would); the string
// facts (slugs, enums, dates, the JSON of bounds) are `documented` only, because the parser reads
// them more leniently (trimmed, an empty value as absent).

export type ReadApiDeps = {
  events: EventReader;
  /** The exports (read/exports-routes.ts); without it they are not registered. */
  exporter?: EventExporter;
};

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
const Timestamp = Type.String({ format: 'date-time' });
const Count = Type.Integer({ minimum: 0 });
const Id = Type.Integer({ minimum: 1 });
const DATA_FIELD_PATTERN = 'data(\\.[A-Za-z_][A-Za-z0-9_-]{0,63}){1,3}';
/** What parseDate accepts: a date, or a date-time (without an offset it is read as UTC). */
const DATE_FACTS = documented({
  anyOf: [
    { type: 'string', format: 'date' },
    { type: 'string', format: 'date-time' },
    { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?$' },
  ],
});
const Longitude = Type.Number({ minimum: -180, maximum: 180 });
const Latitude = Type.Number({ minimum: -90, maximum: 90 });
/** The JSON object in `bounds`, as parseBounds checks it. */
const BOUNDS_FACTS = documented({
  'x-consume': 'application/json',
  type: 'object',
  required: ['north', 'south', 'east', 'west'],
  properties: { north: Latitude, south: Latitude, east: Longitude, west: Longitude },
});

const BOUNDS_DESCRIPTION =
  'JSON `{"north":n,"south":s,"east":e,"west":w}` in degrees. `west > east` means the box crosses the antimeridian.';

export const filterParameters = {
  catalog: Type.Optional(
    Type.String({
      description: 'Catalog slug.',
      ...documented({ pattern: SLUG_PATTERN.source, maxLength: MAX_SLUG_LENGTH }),
    }),
  ),
  datasets: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Dataset slugs; repeat the parameter (`datasets=a&datasets=b`) or separate with commas.',
    }),
  ),
  bounds: Type.Optional(Type.String({ description: BOUNDS_DESCRIPTION, ...BOUNDS_FACTS })),
  startDate: Type.Optional(
    Type.String({ description: 'ISO 8601 date or date-time; events at or after it.', ...DATE_FACTS }),
  ),
  endDate: Type.Optional(
    Type.String({
      description: 'ISO 8601; events at or before it. A date without time includes that whole day (UTC).',
      ...DATE_FACTS,
    }),
  ),
  dateField: Type.Optional(
    Type.String({
      description:
        'Which date startDate/endDate (and the histogram) use: `eventTimestamp` (default) or a custom date field ' +
        "`data.<field>` (see a dataset's `dateFields` in /api/v1/data-sources). Events whose field is missing or not a date do not match a date range.",
      ...documented({ pattern: `^(eventTimestamp|${DATA_FIELD_PATTERN})$` }),
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
  id: Id,
  title: Nullable(
    Type.String({
      description: 'The value of the column mapped as the title at import; null when none was.',
    }),
  ),
  dataset: Type.Object({
    id: Id,
    title: Type.String(),
    catalog: Type.String({ description: 'Catalog slug.' }),
  }),
  data: Type.Object({}, { additionalProperties: true }),
  location: NullableObject({ longitude: Longitude, latitude: Latitude }),
  locatedBy: LocatedBy,
  eventTimestamp: Timestamp,
  isValid: Type.Boolean(),
});

const NullablePage = Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 1 });
const Pagination = Type.Object({
  page: Type.Unsafe<number | null>({
    type: ['integer', 'null'],
    minimum: 1,
    description: 'The page number; null for a page asked by `cursor`.',
  }),
  limit: Id,
  totalDocs: Count,
  totalPages: Count,
  hasNextPage: Type.Boolean(),
  hasPrevPage: Type.Boolean(),
  nextPage: NullablePage,
  prevPage: NullablePage,
});

/** A single event: its id and title. */
const EventPointProperties = Type.Object(
  { id: Id, type: Type.Literal('event-point'), title: Type.String() },
  { $id: 'EventPointProperties' },
);
/** Two or more events in one cell (or at one location): their count, and their ids when MAX_EVENT_IDS or fewer. */
const EventClusterProperties = Type.Object(
  {
    id: Type.Union([Type.Integer(), Type.String()], { description: 'The cell key.' }),
    type: Type.Literal('event-cluster'),
    count: Type.Integer({ minimum: 2 }),
    eventIds: Type.Optional(Type.Array(Id, { maxItems: MAX_EVENT_IDS })),
  },
  { $id: 'EventClusterProperties' },
);
/** Named schemas the routes refer to (the discriminator needs named branches); added by app.ts. */
export const V1_SHARED_SCHEMAS = [EventPointProperties, EventClusterProperties];
/** Features are told apart by `properties.type` (the feature's own `type` is always `Feature`). */
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
  properties: Type.Unsafe<Static<typeof EventPointProperties> | Static<typeof EventClusterProperties>>({
    oneOf: [Type.Ref('EventPointProperties'), Type.Ref('EventClusterProperties')],
    discriminator: {
      propertyName: 'type',
      mapping: {
        'event-point': '#/components/schemas/EventPointProperties',
        'event-cluster': '#/components/schemas/EventClusterProperties',
      },
    },
  }),
});

const zoomParameter = Type.Optional(
  Type.Integer({
    default: DEFAULT_ZOOM,
    minimum: 0,
    maximum: MAX_ZOOM,
    description:
      `0 to ${MAX_ZOOM}. ` +
      'Map zoom: 16 and deeper shows single events (identical locations still group); 10-15 clusters of about 100-1000 m; below 10 aggressive clustering.',
  }),
);
const bucketParameter = (description: string) =>
  Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_BUCKETS, description: `1 to ${MAX_BUCKETS}. ${description}` }),
  );

/** What /api/v1/data-sources tells of a catalog and of a dataset alike. */
const sourceFields = {
  id: Id,
  slug: Type.String(),
  title: Type.String(),
  description: Nullable(Type.String()),
  eventCount: Count,
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
  answer: (viewer: Viewer, query: RawQuery, request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
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
        page: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: 1_000_000,
            description: '1-indexed; default 1. Not with `cursor`.',
          }),
        ),
        cursor: Type.Optional(
          Type.String({
            description:
              'Keyset paging: the `nextCursor` of the previous answer (opaque). The events after that one in the same `sort` ' +
              '(id, eventTimestamp, dataset or isValid, with or without -), unaffected by events inserted or deleted meanwhile.',
          }),
        ),
        limit: Type.Optional(
          Type.Integer({
            default: DEFAULT_LIMIT,
            minimum: 1,
            maximum: MAX_LIMIT,
            description: `1 to ${MAX_LIMIT}.`,
          }),
        ),
        sort: Type.Optional(
          Type.String({
            default: DEFAULT_SORT,
            ...documented({
              pattern: `^-?(${EVENT_SORT_FIELDS.join('|')}|${DATA_FIELD_PATTERN})$`,
            }),
          }),
        ),
      },
      response: Type.Object({
        events: Type.Array(Event),
        pagination: Pagination,
        nextCursor: Type.Unsafe<string | null>({
          type: ['string', 'null'],
          description:
            'Ask `cursor=<this>` (same filters and sort) for the events after this page; null on the last page, and for sorts by a data field.',
        }),
      }),
      // `Cache-Control: no-cache` asks for an answer read from the database now, not a stored one
      // (stored ones are verified against the database anyway; see postgres/read/page-cache.ts).
      // The ETag comes from the data signature the page was read at (http-caching.ts): a cache hit
      // revalidates with no query beyond the cache's own check.
      answer: async (viewer, query, request, reply) => {
        const { json, signature } = await listEvents(deps, viewer, query, { fresh: asksNoCache(request) });
        if (signature !== null) setVersionTag(reply, signature);
        return json;
      },
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
        bounds: Type.String({ description: BOUNDS_DESCRIPTION, ...BOUNDS_FACTS }),
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
        'closest to targetBuckets; a targetBuckets outside the default 20-50 alone widens minBuckets or maxBuckets to it. ' +
        'The earlier variant, `granularity` (day, week, month or auto), gives calendar-aligned UTC buckets (weeks start on ' +
        'Monday) and, as the spec shapes it, no `bucketSizeSeconds` or `bucketCount` in `metadata`.',
      query: {
        ...filterParameters,
        targetBuckets: bucketParameter('Default 30.'),
        minBuckets: bucketParameter('Default 20.'),
        maxBuckets: bucketParameter('Default 50.'),
        granularity: Type.Optional(
          Type.String({
            description: '`day`, `week`, `month` or `auto`; not combinable with the bucket parameters.',
            ...documented({ enum: ['day', 'week', 'month', 'auto'] }),
          }),
        ),
      },
      response: Type.Object({
        histogram: Type.Array(Type.Object({ date: Timestamp, dateEnd: Timestamp, count: Count })),
        metadata: Type.Object({
          total: Count,
          dateRange: Type.Object({ min: Nullable(Timestamp), max: Nullable(Timestamp) }),
          bucketSizeSeconds: Type.Optional(
            Nullable(
              Type.Integer({ minimum: 1, description: 'Absent with `granularity` (the earlier variant).' }),
            ),
          ),
          bucketCount: Type.Optional({
            ...Count,
            description: 'Absent with `granularity` (the earlier variant).',
          }),
          counts: Type.Object({ datasets: Count, catalogs: Count }),
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
        groupBy: Type.String({
          description: '`catalog` or `dataset`.',
          ...documented({ enum: ['catalog', 'dataset'] }),
        }),
      },
      response: Type.Object({
        items: Type.Array(
          Type.Object({
            id: Type.Union([Type.Integer(), Type.String()]),
            name: Type.String(),
            count: Count,
          }),
        ),
        total: Count,
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
        p20: Count,
        p40: Count,
        p60: Count,
        p80: Count,
        p100: Count,
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
            north: Latitude,
            south: Latitude,
            east: Longitude,
            west: Longitude,
          }),
        ),
        count: Count,
        located: Count,
      }),
      answer: (viewer, query) => findEventExtent(deps, viewer, query),
    },
    {
      path: '/api/v1/sources/stats',
      tag: 'sources',
      summary: 'Event counts of every catalog and dataset',
      query: {},
      response: Type.Object({
        catalogCounts: Type.Record(Type.String(), Count, {
          description: 'Catalog id to event count.',
        }),
        datasetCounts: Type.Record(Type.String(), Count, {
          description: 'Dataset id to event count.',
        }),
        totalEvents: Count,
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
        totalEvents: Count,
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
        sampleSize: Type.Optional(
          Type.Integer({ minimum: 1, maximum: 5000, description: '1 to 5000, default 500.' }),
        ),
      },
      response: Type.Object({
        dataset: Type.Object({ id: Id, slug: Type.String(), title: Type.String() }),
        sampleSize: Type.Integer({ minimum: 0, description: 'Events actually sampled.' }),
        totalEvents: Count,
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
            present: Type.Integer({ minimum: 0, description: 'Sampled events that have the field.' }),
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
        const body = await route.answer(viewerOf(request), request.query as RawQuery, request, reply);
        return typeof body === 'string' ? sendJsonText(reply, body) : body;
      },
    );
  }
};
