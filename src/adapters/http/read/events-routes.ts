import type { BackgroundExports } from '../../../application/read/background-exports.ts';
import type { ExportEncoder, ExportFileStore } from '../../../ports/read/export-files.ts';
import type { FastifyContextConfig, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { viewerOf } from '../viewer.ts';
import type { TSchema } from 'typebox';
import { buildHistogram } from '../../../application/read/build-histogram.ts';
import { clusterEvents } from '../../../application/read/cluster-events.ts';
import { countEventsBySource } from '../../../application/read/count-events-by-source.ts';
import { findEventExtent } from '../../../application/read/find-event-extent.ts';
import { inferDatasetSchema } from '../../../application/collections/infer-dataset-schema.ts';
import { listDataSources } from '../../../application/read/list-data-sources.ts';
import { listEvents } from '../../../application/read/list-events.ts';
import { summariseClusterSizes } from '../../../application/read/summarise-cluster-sizes.ts';
import { summariseSources } from '../../../application/read/summarise-sources.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import type { EventExporter } from '../../../ports/read/event-exporter.ts';
import type { ChangeFeed } from '../../../ports/read/change-feed.ts';
import type { EventReader, Viewer } from '../../../ports/read/event-reader.ts';
import type { EventProvenanceReader } from '../../../ports/read/event-provenance.ts';
import { getEvent } from '../../../application/read/event-provenance.ts';
import { costlyWithCustomDateField } from '../concurrency-limit.ts';
import { errorResponses } from '../error-body.ts';
import { setVersionTag } from '../http-caching.ts';
import {
  ClusterSizesResponse,
  clusterSizesQuery,
  DataSourcesResponse,
  DatasetIdParams,
  EventIdParams,
  EventsPage,
  eventsQuery,
  ExtentResponse,
  filterParameters,
  GeoResponse,
  geoQuery,
  HistogramResponse,
  histogramQuery,
  InferredSchemaResponse,
  inferredSchemaQuery,
  OneEvent,
  Query,
  SourceStatsResponse,
  StatsResponse,
  statsQuery,
} from './events-schemas.ts';

// The stable public read API, /api/v1, exactly in the spec's shapes. Parameters are declared here
// for the OpenAPI file and basic typing; their meaning and ranges are checked by the domain parser
// (src/domain/read/read-query.ts), which names the offending parameter in its 400. Integer ranges are
// also in the schemas (the same ranges: Fastify refuses exactly what the parser would); the string
// facts (slugs, enums, dates, the JSON of bounds) are `documented` only, because the parser reads
// them more leniently (trimmed, an empty value as absent).

export type ReadApiDeps = {
  events: EventReader;
  /** One event with its provenance (GET /api/v1/events/{id}); without it the route is not registered. */
  provenance?: EventProvenanceReader;
  /** The change feed (/api/v1/changes, changes-routes.ts), on the primary; without it not registered. */
  changes?: ChangeFeed;
  /** The exports (read/exports-routes.ts); without it they are not registered. */
  exporter?: EventExporter;
  /** Where exports are kept once per data version; without it each download exports afresh. */
  exportFiles?: ExportFileStore;
  /** Writes the file formats (GeoPackage) of the exports; they need `exportFiles` too. */
  exportEncoder?: ExportEncoder;
  /** The PMTiles export's cap in tiles (EXPORT_PMTILES_MAX_TILES). */
  maxArchiveTiles?: number;
  /** Large first exports of the kept-file formats as jobs (application/read/background-exports.ts). */
  exportJobs?: BackgroundExports;
};

/**
 * A body the database built as JSON text (or its UTF-8 bytes): sent as is, without the response
 * serializer (the route's response schema still documents it, and the integration tests check it).
 */
function sendJsonText(reply: FastifyReply, body: string | Buffer): FastifyReply {
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
      query: eventsQuery,
      response: EventsPage,
      costly: 'reads',
      // `Cache-Control: no-cache` asks for an answer read from the database now, not a stored one
      // (stored ones are verified against the database anyway; see postgres/read/page-cache.ts).
      // The ETag comes from the data signature the page was read at (http-caching.ts): a cache hit
      // revalidates with no query beyond the cache's own check.
      answer: async (viewer, query, request, reply) => {
        const { body, signature } = await listEvents(deps, viewer, query, { fresh: asksNoCache(request) });
        if (signature !== null) setVersionTag(reply, signature);
        return body;
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
      query: geoQuery,
      response: GeoResponse,
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
      query: histogramQuery,
      response: HistogramResponse,
      costly: costlyWithCustomDateField,
      answer: (viewer, query) => buildHistogram(deps, viewer, query),
    },
    {
      path: '/api/v1/events/stats',
      tag: 'events',
      summary: 'Event counts per catalog or dataset',
      query: statsQuery,
      response: StatsResponse,
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
      query: clusterSizesQuery,
      response: ClusterSizesResponse,
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
      response: ExtentResponse,
      costly: costlyWithCustomDateField,
      answer: (viewer, query) => findEventExtent(deps, viewer, query),
    },
    {
      path: '/api/v1/sources/stats',
      tag: 'sources',
      summary: 'Event counts of every catalog and dataset',
      query: {},
      response: SourceStatsResponse,
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
      response: DataSourcesResponse,
      answer: (viewer) => listDataSources(deps, viewer),
    },
    {
      path: '/api/v1/datasets/:id/schema/infer',
      tag: 'sources',
      summary: "Inferred field types of a dataset's events",
      description:
        'Types found in the `data` of the newest `sampleSize` events (default 500, max 5000), per field path (`data.a.b`, nested ' +
        'objects up to three levels). A string in ISO 8601 form counts as `date`.',
      params: DatasetIdParams,
      query: inferredSchemaQuery,
      response: InferredSchemaResponse,
      errors: [400, 404, 500],
      answer: (viewer, query, request) =>
        inferDatasetSchema(deps, viewer, (request.params as { id: number }).id, query),
    },
    ...(deps.provenance ? [oneEventRoute(deps.provenance)] : []),
  ];
}

/** GET /api/v1/events/{id} (an addition to the spec, issue 38 §5): one event with its provenance. */
function oneEventRoute(provenance: EventProvenanceReader): ReadRoute {
  return {
    path: '/api/v1/events/:id',
    tag: 'events',
    summary: 'Get one event with its provenance',
    description:
      'One event as `/api/v1/events` shows it, its `provenance` with the `sheet` and the `source` (the uploaded file, ' +
      'the URL import or the scraper run, with the SHA-256 of what was read). 404 for an event the caller may not read. ' +
      'When the dataset\'s owner hides provenance, `provenance` is `{"shown": false}`.',
    params: EventIdParams,
    query: {},
    response: OneEvent,
    errors: [400, 404, 500],
    answer: async (viewer, _query, request) => ({
      event: await getEvent({ provenance }, viewer, (request.params as { id: number }).id),
    }),
  };
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
        return typeof body === 'string' || Buffer.isBuffer(body) ? sendJsonText(reply, body) : body;
      },
    );
  }
};
