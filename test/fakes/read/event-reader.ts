import type { Bounds, EventFilter } from '../../../src/domain/read/read-query.ts';
import type { EventReader } from '../../../src/ports/read/event-reader.ts';
import { clusterFeaturesOf, pageOf } from './event-pages.ts';

// The read model in memory, for the read use cases' tests: the counts, time range, histogram (fixed
// buckets), extent, numbered pages and map features of a small world of public catalogs, datasets and
// events, filtered by catalog, datasets, bounds (across the antimeridian too) and the half-open
// eventTimestamp range, as the PostGIS EventReader answers them. It passes the same behaviour suite
// (test/contracts/read/event-reader.ts). What it does not model (keyset pages, sorts by a data field,
// sources, OGC reads, custom date fields, calendar buckets, visibility: every dataset is public)
// throws, so that a test needing it uses a recording fake
// (test/unit/application/read/read-use-case-fakes.ts) instead.

/** A world of the read model: ids are the world's own; an event without a location has null coordinates. */
export type ReadWorld = {
  catalogs: Array<{ id: number; slug: string; title: string }>;
  datasets: Array<{ id: number; slug: string; title: string; catalogId: number }>;
  events: Array<{
    id: number;
    datasetId: number;
    /** The mapped title; null when the import mapped none. */
    title: string | null;
    longitude: number | null;
    latitude: number | null;
    eventTimestamp: string;
  }>;
};

/** The part of the EventReader port this fake models. */
export type ModelledReads = Pick<
  EventReader,
  | 'countEvents'
  | 'countByDataset'
  | 'timeRange'
  | 'histogram'
  | 'extent'
  | 'listEventsPage'
  | 'clusterFeatures'
>;

/** An event of a world. */
export type WorldEvent = ReadWorld['events'][number];

function inBounds(bounds: Bounds, longitude: number, latitude: number): boolean {
  if (latitude < bounds.south || latitude > bounds.north) return false;
  return bounds.west <= bounds.east
    ? longitude >= bounds.west && longitude <= bounds.east
    : longitude >= bounds.west || longitude <= bounds.east;
}

export function inMemoryEventReader(world: ReadWorld): EventReader {
  const datasetById = new Map(world.datasets.map((dataset) => [dataset.id, dataset]));
  const catalogById = new Map(world.catalogs.map((catalog) => [catalog.id, catalog]));

  const matching = (filter: EventFilter) => {
    if (filter.dateField.kind !== 'eventTimestamp')
      throw new Error('the in-memory read model filters by eventTimestamp only');
    const from = filter.dates.from === null ? null : Date.parse(filter.dates.from);
    const to = filter.dates.to === null ? null : Date.parse(filter.dates.to);
    return world.events.filter((event) => {
      const dataset = datasetById.get(event.datasetId);
      const catalog = dataset && catalogById.get(dataset.catalogId);
      if (!dataset || !catalog) return false;
      if (filter.catalog !== null && catalog.slug !== filter.catalog) return false;
      if (filter.datasets.length > 0 && !filter.datasets.includes(dataset.slug)) return false;
      if (filter.bounds) {
        if (event.longitude === null || event.latitude === null) return false;
        if (!inBounds(filter.bounds, event.longitude, event.latitude)) return false;
      }
      const at = Date.parse(event.eventTimestamp);
      return (from === null || at >= from) && (to === null || at < to);
    });
  };

  const modelled: ModelledReads = {
    async listEventsPage(_viewer, filter, sort, page) {
      return pageOf(world, matching(filter), sort, page);
    },
    async clusterFeatures(_viewer, filter, level) {
      return clusterFeaturesOf(matching(filter), level);
    },
    async countEvents(_viewer, filter) {
      return matching(filter).length;
    },
    async countByDataset(_viewer, filter) {
      const counts = new Map<number, number>();
      for (const event of matching(filter))
        counts.set(event.datasetId, (counts.get(event.datasetId) ?? 0) + 1);
      return [...counts].map(([datasetId, count]) => {
        const dataset = datasetById.get(datasetId);
        const catalog = dataset && catalogById.get(dataset.catalogId);
        if (!dataset || !catalog) throw new Error(`no dataset ${datasetId}`);
        return {
          datasetId,
          datasetTitle: dataset.title,
          catalogId: catalog.id,
          catalogTitle: catalog.title,
          count,
        };
      });
    },
    async timeRange(_viewer, filter) {
      const times = matching(filter).map((event) => Date.parse(event.eventTimestamp));
      if (times.length === 0) return null;
      return {
        min: new Date(Math.min(...times)).toISOString(),
        max: new Date(Math.max(...times)).toISOString(),
      };
    },
    async histogram(_viewer, filter, bins) {
      if (bins.kind !== 'fixed') throw new Error('the in-memory read model has fixed buckets only');
      const buckets = new Map<number, number>();
      for (const event of matching(filter)) {
        const seconds = Date.parse(event.eventTimestamp) / 1000;
        const start =
          bins.originSeconds +
          Math.floor((seconds - bins.originSeconds) / bins.sizeSeconds) * bins.sizeSeconds;
        buckets.set(start, (buckets.get(start) ?? 0) + 1);
      }
      return buckets;
    },
    async extent(_viewer, filter) {
      const events = matching(filter);
      const located = events.filter((event) => event.longitude !== null && event.latitude !== null);
      const longitudes = located.map((event) => event.longitude as number);
      const latitudes = located.map((event) => event.latitude as number);
      return {
        count: events.length,
        located: located.length,
        bounds:
          located.length === 0
            ? null
            : {
                west: Math.min(...longitudes),
                east: Math.max(...longitudes),
                south: Math.min(...latitudes),
                north: Math.max(...latitudes),
              },
      };
    },
  };
  return new Proxy(modelled as EventReader, {
    get(target, method) {
      if (typeof method === 'string' && !(method in target) && method !== 'then')
        return () => {
          throw new Error(`${method} is not in the in-memory read model: use a recording fake`);
        };
      return (target as unknown as Record<string | symbol, unknown>)[method];
    },
  });
}
