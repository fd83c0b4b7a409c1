import type { Granularity } from '../../domain/read/histogram.ts';
import type { EventFilter, Page, Sort } from '../../domain/read/read-query.ts';
import type { CheckedFilter } from '../../domain/read/cql2-tree.ts';
import type { StoredField } from '../../domain/read/typed-properties.ts';

// The read model behind /api/v1. Every method takes the viewer: what a viewer may see is decided in
// one place in the adapter (today every catalog and dataset is public; the accounts work plugs its
// rule in there).

/** Who is reading: the signed-in user, or null when anonymous (the one access rule decides what they see). */
import type { Viewer } from '../../domain/access.ts';
import type { EventView } from '../../domain/read/events.ts';

export type { Viewer };

type DatasetCount = {
  datasetId: number;
  datasetTitle: string;
  catalogId: number;
  catalogTitle: string;
  count: number;
};

export type Bins =
  | { kind: 'fixed'; originSeconds: number; sizeSeconds: number }
  | { kind: 'calendar'; granularity: Granularity };

export type DataSource = {
  id: number;
  slug: string;
  title: string;
  description: string | null;
  eventCount: number;
  datasets: Array<{
    id: number;
    slug: string;
    title: string;
    description: string | null;
    eventCount: number;
    dateFields: string[];
  }>;
};

type DatasetSummary = { id: number; slug: string; title: string; dateFields: string[] };

/**
 * A page of /events: the events as the UTF-8 bytes of their JSON text, the filter's total, and the
 * data signature the answer was read at (scope version and data versions of the datasets it read:
 * equal signatures mean equal answers; null when its statements saw different ones). HTTP derives
 * the page's ETag from it. Bytes, not a string: a page's text holds characters beyond Latin-1 (place
 * names), and a stored answer sent as a string was encoded again on every request, a third of the
 * API's CPU for an answer-cache hit (docs/performance.md, "The page as bytes").
 */
export type EventsPage = { eventsJson: Buffer; totalDocs: number; signature: string | null };

export interface EventReader {
  /**
   * One page of events (each an EventView) as the JSON text of an array, built by the database so
   * that the hot /events path neither parses nor re-serialises rows (nor encodes them again: bytes),
   * with the filter's total.
   */
  listEventsPage(
    viewer: Viewer,
    filter: EventFilter,
    sort: Sort,
    page: Page,
    /** `fresh`: read the database, not a stored answer (the client sent `Cache-Control: no-cache`). */
    options?: { fresh?: boolean },
  ): Promise<EventsPage>;
  countEvents(viewer: Viewer, filter: EventFilter): Promise<number>;
  /** Matching events per dataset (datasets without matches are left out). */
  countByDataset(viewer: Viewer, filter: EventFilter): Promise<DatasetCount[]>;
  /**
   * The map features (GeoJSON `Feature`s as the spec shapes them) at a grid level (null: exact
   * locations), as the JSON text of an array: built by the database, passed on as is.
   */
  clusterFeatures(viewer: Viewer, filter: EventFilter, level: number | null): Promise<string>;
  /** Sizes of the clusters at the level, as percentiles (fractions 0..1) of the cluster list. */
  clusterSizePercentiles(
    viewer: Viewer,
    filter: EventFilter,
    level: number | null,
    fractions: number[],
  ): Promise<number[] | null>;
  timeRange(viewer: Viewer, filter: EventFilter): Promise<{ min: string; max: string } | null>;
  /** Counts per bucket start (epoch seconds). */
  histogram(viewer: Viewer, filter: EventFilter, bins: Bins): Promise<Map<number, number>>;
  extent(
    viewer: Viewer,
    filter: EventFilter,
  ): Promise<{
    count: number;
    located: number;
    bounds: { north: number; south: number; east: number; west: number } | null;
  }>;
  dataSources(viewer: Viewer): Promise<DataSource[]>;
  /** A dataset by its slug, with its catalog's slug; null when there is none or the viewer may not read it. */
  readableDataset(
    viewer: Viewer,
    slug: string,
  ): Promise<{
    id: number;
    slug: string;
    title: string;
    description: string | null;
    catalogSlug: string;
  } | null>;
  /**
   * Cheap extents of every dataset the viewer may read, for OGC API – Features' collection list: the
   * box of its level-10 cells (rounded outward by up to a cell, ~39 km; null while its counts are
   * pending or when no event has a location) and its first and last event timestamps (null: none).
   */
  datasetExtents(viewer: Viewer): Promise<
    Array<{
      datasetId: number;
      bounds: { north: number; south: number; east: number; west: number } | null;
      first: string | null;
      last: string | null;
    }>
  >;
  /**
   * One event of a dataset by its id (OGC API – Features' items/{featureId}); null when there is no
   * such event in that dataset or the viewer may not see the dataset.
   */
  eventInDataset(viewer: Viewer, datasetSlug: string, eventId: number): Promise<EventView | null>;
  /**
   * The fields of a dataset's latest schema version (typed-properties.ts makes its typed properties);
   * [] when it has none, null when there is no such dataset or the viewer may not read it.
   */
  collectionFields(viewer: Viewer, datasetSlug: string): Promise<StoredField[] | null>;
  /**
   * A page of a dataset's events in id order under a checked CQL2 filter (OGC API – Features Part 3),
   * as listEventsPage's JSON bytes, with the filter's total; empty when the viewer may not read it.
   */
  filteredItemsPage(
    viewer: Viewer,
    datasetSlug: string,
    filter: CheckedFilter,
    page: Page,
  ): Promise<{ eventsJson: Buffer; totalDocs: number }>;
  /** The `data` of the dataset's newest events; null when the dataset does not exist or the viewer may not see it. */
  sampleData(
    viewer: Viewer,
    datasetId: number,
    sampleSize: number,
  ): Promise<{ dataset: DatasetSummary; total: number; samples: Array<Record<string, unknown>> } | null>;
}
