import type { ExportEncoder, ExportFileStore } from '../../../ports/read/export-files.ts';
import type { FastifyContextConfig, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { viewerOf } from '../viewer.ts';
import { type TSchema, Type } from 'typebox';
import { buildHistogram } from '../../../application/read/build-histogram.ts';
import { clusterEvents } from '../../../application/read/cluster-events.ts';
import { GEO_MAX_CELLS } from '../../../domain/read/geo-cap.ts';
import { countEventsBySource } from '../../../application/read/count-events-by-source.ts';
import { findEventExtent } from '../../../application/read/find-event-extent.ts';
import { inferDatasetSchema } from '../../../application/collections/infer-dataset-schema.ts';
import { listDataSources } from '../../../application/read/list-data-sources.ts';
import { listEvents } from '../../../application/read/list-events.ts';
import { summariseClusterSizes } from '../../../application/read/summarise-cluster-sizes.ts';
import { summariseSources } from '../../../application/read/summarise-sources.ts';
import { DEFAULT_LIMIT, DEFAULT_SORT, MAX_LIMIT, type RawQuery } from '../../../domain/read/read-query.ts';
import { EVENT_SORT_FIELDS } from '../../../domain/read/sort.ts';
import type { EventExporter } from '../../../ports/read/event-exporter.ts';
import type { EventReader, Viewer } from '../../../ports/read/event-reader.ts';
import { costlyWithCustomDateField } from '../concurrency-limit.ts';
import { errorResponses } from '../error-body.ts';
import { setVersionTag } from '../http-caching.ts';
import { documented } from '../openapi-document.ts';
import {
  Nullable,
  Timestamp,
  Count,
  Id,
  DATA_FIELD_PATTERN,
  Longitude,
  Latitude,
  BOUNDS_DESCRIPTION,
  filterParameters,
  Query,
  Event,
  Pagination,
  Feature,
  zoomParameter,
  bucketParameter,
  BOUNDS_FACTS,
  sourceFields,
} from './events-schemas.ts';

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
  /** Where exports are kept once per data version; without it each download exports afresh. */
  exportFiles?: ExportFileStore;
  /** Writes the file formats (GeoPackage) of the exports; they need `exportFiles` too. */
  exportEncoder?: ExportEncoder;
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
  /**
   * Whether its cost grows with the data, so that it takes a place of the `reads` class while it runs
   * (http/concurrency-limit.ts): always, or with a custom date field (which no index serves).
   */
  costly?: FastifyContextConfig['costly'];
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
      costly: 'reads',
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
      costly: costlyWithCustomDateField,
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
      costly: costlyWithCustomDateField,
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
      costly: costlyWithCustomDateField,
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
      costly: costlyWithCustomDateField,
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
      costly: costlyWithCustomDateField,
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
        ...(route.costly ? { config: { costly: route.costly } } : {}),
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
