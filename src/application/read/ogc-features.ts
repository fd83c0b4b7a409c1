import { NotFoundError } from '../../domain/errors.ts';
import {
  CONFORMANCE_CLASSES,
  CRS84,
  GEOJSON_TYPE,
  GREGORIAN_TRS,
  isCollectionId,
  KEPT_PARAMETERS,
  JSON_TYPE,
  type Link,
  OPENAPI_TYPE,
  SCHEMA_TYPE,
  pageLinks,
  parseBbox,
  parseDatetime,
  parseFeatureId,
  parseLimit,
  parseOffset,
  type PageStart,
} from '../../domain/read/ogc.ts';
import { encodeCursor, parseCursor, positionAfter } from '../../domain/read/event-cursor.ts';
import { type Bounds, type EventFilter, invalid, type RawQuery } from '../../domain/read/read-query.ts';
import { parseEventSort } from '../../domain/read/sort.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';
import type { EventView } from '../../domain/read/events.ts';
import { checkPageSize } from '../../domain/read/page-bytes.ts';
import { eventCount } from './list-events.ts';
import type { EventFeature } from '../../domain/read/event-feature.ts';
import { jsonProperties, type PropertyField, propertyFields } from '../../domain/read/typed-properties.ts';
import { parseOgcFilter } from '../../domain/read/ogc-filter.ts';
import { checkFilter, queryablesOf, withPlace } from '../../domain/read/cql2-tree.ts';
import { collectionSchemas } from './ogc-schemas.ts';

// OGC API – Features, Part 1 Core + GeoJSON, over the /api/v1 read model: one collection per dataset
// the viewer may read (the same visibility as /api/v1), its items the dataset's events. `base` is
// the absolute URL of the API's landing page (e.g. http://host/ogc): the standard's links are
// absolute, and clients such as GDAL resolve a path-only link against the landing page, not the host.

export type OgcDeps = { events: EventReader; clock: Clock };

type Feature = EventFeature;

type Collection = {
  id: string;
  title: string;
  description?: string;
  links: Link[];
  extent?: {
    spatial?: { bbox: number[][]; crs: string };
    temporal?: { interval: Array<Array<string | null>>; trs: string };
  };
  itemType: 'feature';
  crs: string[];
};

type DatasetEntry = {
  id: number;
  slug: string;
  title: string;
  description: string | null;
  catalogSlug: string;
};

export function landingPage(base: string) {
  return {
    title: 'Chronomap',
    description: 'Events on a map and a timeline, as OGC API – Features: one collection per dataset.',
    links: [
      { href: base, rel: 'self', type: JSON_TYPE, title: 'this document' },
      {
        href: apiUrl(base, '/api/openapi.json'),
        rel: 'service-desc',
        type: OPENAPI_TYPE,
        title: 'the API definition',
      },
      {
        href: apiUrl(base, '/api/docs'),
        rel: 'service-doc',
        type: 'text/html',
        title: 'the API documentation',
      },
      { href: `${base}/conformance`, rel: 'conformance', type: JSON_TYPE, title: 'conformance classes' },
      { href: `${base}/collections`, rel: 'data', type: JSON_TYPE, title: 'the collections (datasets)' },
    ] satisfies Link[],
  };
}

export function conformance() {
  return { conformsTo: [...CONFORMANCE_CLASSES] };
}

/**
 * Every dataset the viewer may read, as a collection, with the cheap extents of the read model (the
 * box rounded outward to whole level-10 cells); each collection's own document has the exact box.
 */
export async function listCollections(deps: OgcDeps, viewer: Viewer, base: string) {
  const [datasets, extents] = await Promise.all([
    readableDatasets(deps, viewer),
    deps.events.datasetExtents(viewer),
  ]);
  const extentOf = new Map(extents.map((extent) => [extent.datasetId, extent]));
  return {
    links: [
      { href: `${base}/collections`, rel: 'self', type: JSON_TYPE, title: 'this document' },
    ] satisfies Link[],
    collections: datasets.map((dataset) => {
      const collection = collectionOf(base, dataset);
      collection.extent = collectionExtent(extentOf.get(dataset.id));
      return collection;
    }),
  };
}

type DatasetExtent = Awaited<ReturnType<OgcDeps['events']['datasetExtents']>>[number];

/**
 * A collection's one extent, the same in /collections and /collections/{id} (issue 35 §4): the
 * read model's cheap box (rounded outward to whole level-10 cells) and first and last timestamps.
 */
function collectionExtent(extent: DatasetExtent | undefined): Collection['extent'] {
  return extentDocument(
    extent?.bounds ?? null,
    extent?.first && extent.last ? { min: extent.first, max: extent.last } : null,
  );
}

/** One collection with its extent, the one /collections gives (collectionExtent); 404 when not readable. */
export async function describeCollection(
  deps: OgcDeps,
  viewer: Viewer,
  collectionId: string,
  base: string,
): Promise<Collection> {
  const dataset = await findDataset(deps, viewer, collectionId);
  const extents = await deps.events.datasetExtents(viewer);
  const collection = collectionOf(base, dataset);
  collection.extent = collectionExtent(extents.find((extent) => extent.datasetId === dataset.id));
  return collection;
}

/** The standard's extent object; a part without events is left out. */
function extentDocument(
  bounds: Bounds | null,
  range: { min: string; max: string } | null,
): Collection['extent'] {
  return {
    ...(bounds
      ? { spatial: { bbox: [[bounds.west, bounds.south, bounds.east, bounds.north]], crs: CRS84 } }
      : {}),
    ...(range ? { temporal: { interval: [[range.min, range.max]], trs: GREGORIAN_TRS } } : {}),
  };
}

/** A page of a collection's items, ordered by id, with numberMatched and the paging links. */
export async function listItems(
  deps: OgcDeps,
  viewer: Viewer,
  collectionId: string,
  query: RawQuery,
  base: string,
) {
  // Parameters first (400 before any query), then the page, then the collection (404).
  const bounds = parseBbox(query.bbox);
  const dates = parseDatetime(query.datetime);
  const sort = parseEventSort('id');
  // A cursor comes from a next link past the depth offsets reach (page-depth.ts).
  const after = parseCursor(query.cursor, sort);
  if (after && query.offset !== undefined) throw invalid('offset', 'offset and cursor exclude each other');
  const page = { ...parseOffset(query.offset, parseLimit(query.limit)), ...(after ? { after } : {}) };
  const tree = parseOgcFilter(query);
  const fields = await typedFields(deps, viewer, collectionId);
  const cql = tree && checkFilter(tree, queryablesOf(fields));
  // A filter reads the dataset's rows (with bbox and datetime as part of it); without one, the page
  // is the read model's, with its precomputed totals and its cache.
  const { eventsJson, totalDocs } = cql
    ? await deps.events.filteredItemsPage(viewer, collectionId, withPlace(cql, bounds, dates), page)
    : await deps.events.listEventsPage(viewer, collectionFilter(collectionId, dates, bounds), sort, page);
  // Refused before it is parsed or sent: the byte bound of every page (page-bytes.ts).
  checkPageSize(eventsJson.length, () => eventCount(eventsJson), page.limit);
  const events = JSON.parse(eventsJson.toString('utf8')) as EventView[];
  // The page is read with the viewer's visibility: an event in it proves the collection is theirs
  // to read (and names its title), so only an empty page costs the lookup that tells 404 from empty.
  const first = events[0];
  const dataset = first
    ? { slug: collectionId, title: first.dataset.title }
    : await findDataset(deps, viewer, collectionId);
  const features = events.map((event) => featureOf(event, collectionId, fields));
  const itemsUrl = `${collectionUrl(base, dataset.slug)}/items`;
  const last = events.length === page.limit ? events.at(-1) : undefined;
  const position = last ? positionAfter(sort, last) : null;
  const start: PageStart = after
    ? { cursor: String(query.cursor) }
    : { offset: (page.page - 1) * page.limit };
  const links = pageLinks(
    itemsUrl,
    Object.fromEntries(KEPT_PARAMETERS.map((name) => [name, textOf(query[name])])),
    {
      start,
      limit: page.limit,
      returned: features.length,
      matched: totalDocs,
      after: position ? encodeCursor(sort, position) : null,
    },
  );
  links.push({
    href: collectionUrl(base, dataset.slug),
    rel: 'collection',
    type: JSON_TYPE,
    title: dataset.title,
  });
  return {
    type: 'FeatureCollection' as const,
    features,
    links,
    numberMatched: totalDocs,
    numberReturned: features.length,
    // No timeStamp (optional in the standard): it made every answer's bytes, so its ETag, new on
    // each request, and no 304 possible (issue 35 §4). The body is a function of the data alone.
  };
}

/** One item; 404 for an id that is not an event of this (readable) collection. */
export async function getItem(
  deps: OgcDeps,
  viewer: Viewer,
  collectionId: string,
  featureId: string,
  base: string,
) {
  const id = parseFeatureId(featureId);
  // The event is read with the viewer's visibility and the collection's slug: found, it proves the
  // collection readable; not found, the collection's lookup tells which of the two is missing.
  const event =
    id === null || !isCollectionId(collectionId)
      ? null
      : await deps.events.eventInDataset(viewer, collectionId, id);
  if (!event) {
    await findDataset(deps, viewer, collectionId);
    throw new NotFoundError(`no feature "${featureId}" in collection "${collectionId}"`, {
      code: 'FEATURE_NOT_FOUND',
    });
  }
  const dataset = { slug: collectionId, title: event.dataset.title };
  const url = `${collectionUrl(base, dataset.slug)}/items/${event.id}`;
  const fields = await typedFields(deps, viewer, collectionId);
  return {
    ...featureOf(event, dataset.slug, fields),
    links: [
      { href: url, rel: 'self', type: GEOJSON_TYPE, title: 'this feature' },
      { href: collectionUrl(base, dataset.slug), rel: 'collection', type: JSON_TYPE, title: dataset.title },
    ] satisfies Link[],
  };
}

/**
 * An event as a GeoJSON Feature: id = event id, a point or null, the fixed properties, the dataset's
 * typed properties (typed-properties.ts) and the event's `data` as it is.
 */
function featureOf(event: EventView, datasetSlug: string, fields: readonly PropertyField[]): Feature {
  return {
    type: 'Feature',
    id: event.id,
    geometry: event.location
      ? { type: 'Point', coordinates: [event.location.longitude, event.location.latitude] }
      : null,
    properties: {
      title: event.title,
      eventTimestamp: event.eventTimestamp,
      dataset: datasetSlug,
      catalog: event.dataset.catalog,
      ...jsonProperties(fields, event.data),
      data: event.data,
    },
  };
}

/** The typed properties of a collection; 404 when it is not the viewer's to read. */
async function typedFields(deps: OgcDeps, viewer: Viewer, collectionId: string): Promise<PropertyField[]> {
  const stored = isCollectionId(collectionId)
    ? await deps.events.collectionFields(viewer, collectionId)
    : null;
  if (stored === null) {
    throw new NotFoundError(`no collection "${collectionId}"`, { code: 'COLLECTION_NOT_FOUND' });
  }
  return propertyFields(stored);
}

/** `/collections/{id}/queryables` and `/collections/{id}/schema` (Part 3 and Part 5). */
export async function collectionDocument(
  deps: OgcDeps,
  viewer: Viewer,
  collectionId: string,
  base: string,
  which: 'queryables' | 'schema',
) {
  const fields = await typedFields(deps, viewer, collectionId);
  const dataset = await findDataset(deps, viewer, collectionId);
  return collectionSchemas(collectionUrl(base, dataset.slug), dataset.title, fields)[which];
}

function collectionFilter(
  slug: string,
  dates: EventFilter['dates'],
  bounds: EventFilter['bounds'],
): EventFilter {
  return { catalog: null, datasets: [slug], bounds, dates, dateField: { kind: 'eventTimestamp' } };
}

async function readableDatasets(deps: OgcDeps, viewer: Viewer): Promise<DatasetEntry[]> {
  const catalogs = await deps.events.dataSources(viewer);
  return catalogs.flatMap((catalog) =>
    catalog.datasets.map((dataset) => ({ ...dataset, catalogSlug: catalog.slug })),
  );
}

/** The dataset behind a collection id (its slug), if the viewer may read it; else 404. */
async function findDataset(deps: OgcDeps, viewer: Viewer, collectionId: string): Promise<DatasetEntry> {
  const dataset = isCollectionId(collectionId)
    ? await deps.events.readableDataset(viewer, collectionId)
    : null;
  if (!dataset) {
    throw new NotFoundError(`no collection "${collectionId}"`, { code: 'COLLECTION_NOT_FOUND' });
  }
  return dataset;
}

function collectionOf(base: string, dataset: DatasetEntry): Collection {
  const url = collectionUrl(base, dataset.slug);
  return {
    id: dataset.slug,
    title: dataset.title,
    ...(dataset.description ? { description: dataset.description } : {}),
    links: [
      { href: url, rel: 'self', type: JSON_TYPE, title: 'this collection' },
      { href: `${url}/items`, rel: 'items', type: GEOJSON_TYPE, title: `the events of ${dataset.title}` },
      {
        href: `${url}/queryables`,
        rel: 'http://www.opengis.net/def/rel/ogc/1.0/queryables',
        type: SCHEMA_TYPE,
        title: 'the properties a filter may name',
      },
      { href: `${url}/schema`, rel: 'describedby', type: SCHEMA_TYPE, title: 'the schema of its features' },
    ],
    itemType: 'feature',
    crs: [CRS84],
  };
}

function collectionUrl(base: string, slug: string): string {
  return `${base}/collections/${encodeURIComponent(slug)}`;
}

/** The service's other documents live beside /ogc, on the same origin. */
/**
 * A path of the service beside the OGC API's landing page (`base` ends in `/ogc`): under the same
 * prefix, so a service published at https://host/chronomap links https://host/chronomap/api/...
 */
function apiUrl(base: string, path: string): string {
  return `${base.replace(/\/ogc$/, '')}${path}`;
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
