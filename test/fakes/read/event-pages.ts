import { mercatorCell, MAX_EVENT_IDS } from '../../../src/domain/read/clustering.ts';
import type { Page, Sort } from '../../../src/domain/read/read-query.ts';
import type { EventsPage } from '../../../src/ports/read/event-reader.ts';
import type { ReadWorld, WorldEvent } from './event-reader.ts';

// Pages and map features of the in-memory read model (test/fakes/read/event-reader.ts), shaped as
// the PostGIS reader's JSON text: the page's EventView objects in the sort's order (ties by id in the
// same direction; a null title last ascending and first descending, as PostgreSQL orders nulls), and
// the GeoJSON features per exact location or per grid cell of a level.

type SortValue = number | string | boolean | null;

function sortValue(world: ReadWorld, event: WorldEvent, sort: Sort): SortValue {
  const field = sort.key.field;
  switch (field) {
    case 'id':
      return event.id;
    case 'eventTimestamp':
      return Date.parse(event.eventTimestamp);
    case 'isValid':
      return true;
    case 'dataset':
      return event.datasetId;
    case 'catalog':
      return world.datasets.find((dataset) => dataset.id === event.datasetId)?.catalogId ?? null;
    case 'title':
      return event.title;
    default:
      throw new Error(`the in-memory read model does not sort by ${field}`);
  }
}

/** Ascending order of two sort values, nulls after everything (PostgreSQL's default). */
function ascending(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

function eventJson(world: ReadWorld, event: WorldEvent): string {
  const dataset = world.datasets.find((candidate) => candidate.id === event.datasetId);
  const catalog = world.catalogs.find((candidate) => candidate.id === dataset?.catalogId);
  if (!dataset || !catalog) throw new Error(`no dataset ${event.datasetId}`);
  const located = event.longitude !== null && event.latitude !== null;
  return JSON.stringify({
    id: event.id,
    title: event.title,
    dataset: { id: dataset.id, title: dataset.title, catalog: catalog.slug },
    data: {},
    location: located ? { longitude: event.longitude, latitude: event.latitude } : null,
    locatedBy: located ? { method: 'coordinates' } : null,
    eventTimestamp: new Date(event.eventTimestamp).toISOString(),
    isValid: true,
    // The world's events were stored outside an import, at no particular time.
    provenance: {
      shown: true,
      importJob: null,
      row: null,
      storedAt: new Date(0).toISOString(),
      changedAt: new Date(0).toISOString(),
      page: `/events/${event.id}/provenance`,
    },
  });
}

/** A numbered page of the matching events in the sort. */
export function pageOf(world: ReadWorld, events: WorldEvent[], sort: Sort, page: Page): EventsPage {
  if (page.after) throw new Error('the in-memory read model pages by number only');
  const direction = sort.descending ? -1 : 1;
  const sorted = [...events].sort(
    (a, b) =>
      direction * ascending(sortValue(world, a, sort), sortValue(world, b, sort)) ||
      direction * (a.id - b.id),
  );
  const shown = sorted.slice((page.page - 1) * page.limit, page.page * page.limit);
  return {
    eventsJson: Buffer.from(`[${shown.map((event) => eventJson(world, event)).join(',')}]`),
    totalDocs: events.length,
    signature: 'in-memory',
  };
}

/**
 * The map features of the located events: one per exact location (level null) or per grid cell of
 * the level, at the mean of its events' positions; a lone event is an `event-point` with its title,
 * any other group an `event-cluster` with its count and, when ten or fewer, its ids ascending.
 */
export function clusterFeaturesOf(events: WorldEvent[], level: number | null): string {
  const groups = new Map<string, WorldEvent[]>();
  for (const event of events) {
    if (event.longitude === null || event.latitude === null) continue;
    const cell = level === null ? null : mercatorCell(event.longitude, event.latitude, level);
    const key =
      cell === null
        ? `cluster:p:${event.longitude}:${event.latitude}`
        : `cluster:${level}:${cell.x}:${cell.y}`;
    groups.set(key, [...(groups.get(key) ?? []), event]);
  }
  const features = [...groups].map(([key, members]) => {
    const mean = (value: (event: WorldEvent) => number) =>
      members.reduce((sum, event) => sum + value(event), 0) / members.length;
    const coordinates = [mean((event) => event.longitude ?? 0), mean((event) => event.latitude ?? 0)];
    const ids = members.map((event) => event.id).sort((a, b) => a - b);
    const properties =
      members.length === 1
        ? { id: ids[0], type: 'event-point', title: members[0]?.title ?? '' }
        : {
            id: key,
            type: 'event-cluster',
            count: members.length,
            ...(members.length <= MAX_EVENT_IDS ? { eventIds: ids } : {}),
          };
    return { type: 'Feature', geometry: { type: 'Point', coordinates }, properties };
  });
  return JSON.stringify(features);
}
