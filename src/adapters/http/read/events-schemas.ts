import { type Static, type TSchema, Type } from 'typebox';
import { MAX_EVENT_IDS } from '../../../domain/read/clustering.ts';
import {
  DEFAULT_LIMIT,
  DEFAULT_SORT,
  DEFAULT_ZOOM,
  MAX_LIMIT,
  MAX_ZOOM,
} from '../../../domain/read/read-query.ts';
import { EVENT_SORT_FIELDS } from '../../../domain/read/sort.ts';
import { GEO_MAX_CELLS } from '../../../domain/read/geo-cap.ts';
import { MAX_BUCKETS } from '../../../domain/read/histogram.ts';
import { documented } from '../openapi-document.ts';
import { Provenance } from './provenance-schemas.ts';
import { MAX_SLUG_LENGTH, SLUG_PATTERN } from '../../../domain/collections/slugs.ts';

// The /api/v1 read API's schemas (src/adapters/http/read/events-routes.ts has the routes): the
// spec's shapes of events, pages, features and the filter parameters, for validation and the
// OpenAPI document.

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
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
export const Timestamp = Type.String({ format: 'date-time' });
const Count = Type.Integer({ minimum: 0 });
export const Id = Type.Integer({ minimum: 1 });
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

export const Query = (properties: Record<string, TSchema>) =>
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
        precision: Type.Optional(
          Type.Union([Type.Literal('city'), Type.Literal('locality'), Type.Literal('region'), Type.Null()], {
            description:
              'How exactly the place stands for the address: `city` (the town named), `locality` (a street, square or ' +
              'venue in it: the town\u2019s location), `region`; null when the provider does not say. Absent on events ' +
              'located before it was recorded.',
          }),
        ),
        candidateCount: Type.Optional(
          Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
            description:
              'Distinct places of the name that fit the address (1: no ambiguity); null when the provider does not say.',
          }),
        ),
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

export const Event = Type.Object({
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
  provenance: Provenance,
});

/** GET /api/v1/events/{id}: one event, its provenance with the source. */
export const OneEvent = Type.Object({ event: Event });
export const EventIdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 9007199254740991 }) });

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

// Each read route's parameters and 200 body (events-routes.ts pairs them with the use case). The
// event itself is `Event` above: a field added to the events' answer goes there.

export const eventsQuery = {
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
};

export const EventsPage = Type.Object({
  events: Type.Array(Event),
  pagination: Pagination,
  nextCursor: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    description:
      'Ask `cursor=<this>` (same filters and sort) for the events after this page; null on the last page, and for sorts by a data field.',
  }),
});

export const geoQuery = {
  ...filterParameters,
  bounds: Type.String({ description: BOUNDS_DESCRIPTION, ...BOUNDS_FACTS }),
  zoom: zoomParameter,
};

export const GeoResponse = Type.Object({
  type: Type.Literal('FeatureCollection'),
  capped: Type.Boolean({
    description: `True when the box spans more than ${GEO_MAX_CELLS} cells of the zoom's cluster level: the answer is clustered on a coarser level (at most ${GEO_MAX_CELLS} features).`,
  }),
  features: Type.Array(Feature),
});

export const histogramQuery = {
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
};

export const HistogramResponse = Type.Object({
  histogram: Type.Array(Type.Object({ date: Timestamp, dateEnd: Timestamp, count: Count })),
  metadata: Type.Object({
    total: Count,
    dateRange: Type.Object({ min: Nullable(Timestamp), max: Nullable(Timestamp) }),
    bucketSizeSeconds: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, description: 'Absent with `granularity` (the earlier variant).' })),
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
});

export const statsQuery = {
  ...filterParameters,
  groupBy: Type.String({
    description: '`catalog` or `dataset`.',
    ...documented({ enum: ['catalog', 'dataset'] }),
  }),
};

export const StatsResponse = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.Union([Type.Integer(), Type.String()]),
      name: Type.String(),
      count: Count,
    }),
  ),
  total: Count,
  groupedBy: Type.Union([Type.Literal('catalog'), Type.Literal('dataset')]),
});

export const clusterSizesQuery = { ...filterParameters, zoom: zoomParameter };

export const ClusterSizesResponse = Type.Object({
  p20: Count,
  p40: Count,
  p60: Count,
  p80: Count,
  p100: Count,
});

export const ExtentResponse = Type.Object({
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
});

export const SourceStatsResponse = Type.Object({
  catalogCounts: Type.Record(Type.String(), Count, {
    description: 'Catalog id to event count.',
  }),
  datasetCounts: Type.Record(Type.String(), Count, {
    description: 'Dataset id to event count.',
  }),
  totalEvents: Count,
});

export const DataSourcesResponse = Type.Object({
  catalogs: Type.Array(
    Type.Object({
      ...sourceFields,
      datasets: Type.Array(Type.Object({ ...sourceFields, dateFields: Type.Array(Type.String()) })),
    }),
  ),
  totalEvents: Count,
});

export const inferredSchemaQuery = {
  sampleSize: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 5000, description: '1 to 5000, default 500.' }),
  ),
};

export const InferredSchemaResponse = Type.Object({
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
});

export const DatasetIdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) });
