import type { Test } from 'tap';
import { parseEventFilter, type RawQuery } from '../../../src/domain/read/read-query.ts';
import type { ModelledReads, ReadWorld } from '../../fakes/read/event-reader.ts';
import { pageAndFeatureContract } from './event-pages.ts';

// What every implementation of the read model's counts, time range, histogram, extent, numbered pages
// and map features does, as one
// suite over one small world: run against the in-memory fake (test/unit/fakes/read/
// event-reader.test.ts) and against postgresEventReader (test/integration/read/
// event-reader-contract.test.ts). The expected values are worked out by hand from the world.

/** A read model holding `world` (every dataset public), read anonymously. */
export type MakeEventReader = (t: Test, world: ReadWorld) => Promise<ModelledReads>;

export const READ_WORLD: ReadWorld = {
  catalogs: [
    { id: 1, slug: 'news', title: 'News' },
    { id: 2, slug: 'science', title: 'Science' },
  ],
  datasets: [
    { id: 10, slug: 'protests', title: 'Protests', catalogId: 1 },
    { id: 11, slug: 'fires', title: 'Fires', catalogId: 1 },
    { id: 12, slug: 'exhibitions', title: 'Exhibitions', catalogId: 2 },
  ],
  events: [
    {
      id: 1,
      title: 'Berlin march',
      datasetId: 10,
      longitude: 13.4,
      latitude: 52.5,
      eventTimestamp: '2024-01-10T12:00:00.000Z',
    },
    {
      id: 2,
      title: 'Paris strike',
      datasetId: 10,
      longitude: 2.35,
      latitude: 48.85,
      eventTimestamp: '2024-01-20T08:30:00.000Z',
    },
    {
      id: 3,
      title: 'Fiji east',
      datasetId: 11,
      longitude: 179.6,
      latitude: -16.5,
      eventTimestamp: '2024-02-05T00:00:00.000Z',
    },
    {
      id: 4,
      title: 'Fiji west',
      datasetId: 11,
      longitude: -179.7,
      latitude: -16.2,
      eventTimestamp: '2024-03-01T00:00:00.000Z',
    },
    {
      id: 5,
      title: null,
      datasetId: 11,
      longitude: null,
      latitude: null,
      eventTimestamp: '2024-03-15T10:00:00.000Z',
    },
    {
      id: 6,
      title: 'Tokyo show',
      datasetId: 12,
      longitude: 139.69,
      latitude: 35.68,
      eventTimestamp: '2023-12-31T23:59:59.000Z',
    },
    {
      id: 7,
      title: 'New York fair',
      datasetId: 12,
      longitude: -74,
      latitude: 40.7,
      eventTimestamp: '2024-04-01T00:00:00.000Z',
    },
  ],
};

const filter = (query: RawQuery) => parseEventFilter(query);
const box = (north: number, south: number, east: number, west: number) =>
  JSON.stringify({ north, south, east, west });
const DAY = 86_400;

export function eventReaderContract(t: Test, make: MakeEventReader): void {
  t.test(
    'counts: by catalog, datasets, bounds (across the antimeridian too) and a half-open date range',
    async (t) => {
      const reader = await make(t, READ_WORLD);
      t.equal(await reader.countEvents(null, filter({})), 7, 'everything');
      t.equal(await reader.countEvents(null, filter({ catalog: 'news' })), 5, 'a catalog');
      t.equal(await reader.countEvents(null, filter({ datasets: 'fires,exhibitions' })), 5, 'two datasets');
      t.equal(await reader.countEvents(null, filter({ bounds: box(60, 40, 20, -10) })), 2, 'Europe');
      t.equal(
        await reader.countEvents(null, filter({ bounds: box(0, -30, -170, 170) })),
        2,
        'a box across the antimeridian holds both sides of Fiji',
      );
      t.equal(
        await reader.countEvents(null, filter({ startDate: '2024-01-01', endDate: '2024-02-29' })),
        3,
        'the end date includes its whole day and no more',
      );
    },
  );

  t.test('counts per dataset: titles with their catalog, datasets without a match left out', async (t) => {
    const reader = await make(t, READ_WORLD);
    const counts = await reader.countByDataset(null, filter({ catalog: 'news' }));
    t.same(
      counts
        .map(({ datasetTitle, catalogTitle, count }) => ({ datasetTitle, catalogTitle, count }))
        .sort((a, b) => a.datasetTitle.localeCompare(b.datasetTitle)),
      [
        { datasetTitle: 'Fires', catalogTitle: 'News', count: 3 },
        { datasetTitle: 'Protests', catalogTitle: 'News', count: 2 },
      ],
    );
    t.same(await reader.countByDataset(null, filter({ startDate: '2030-01-01' })), [], 'no match: no rows');
  });

  t.test('the time range: the first and last matching timestamps, null when nothing matches', async (t) => {
    const reader = await make(t, READ_WORLD);
    const range = await reader.timeRange(null, filter({ datasets: 'fires' }));
    t.same(range && { min: Date.parse(range.min), max: Date.parse(range.max) }, {
      min: Date.parse('2024-02-05T00:00:00Z'),
      max: Date.parse('2024-03-15T10:00:00Z'),
    });
    t.equal(await reader.timeRange(null, filter({ startDate: '2030-01-01' })), null);
  });

  t.test('fixed buckets: counts by bucket start, an event on a boundary in the later bucket', async (t) => {
    const reader = await make(t, READ_WORLD);
    const origin = Date.parse('2024-01-01T00:00:00Z') / 1000;
    const buckets = await reader.histogram(null, filter({ catalog: 'news' }), {
      kind: 'fixed',
      originSeconds: origin,
      sizeSeconds: 30 * DAY,
    });
    t.same(
      [...buckets].sort(([a], [b]) => a - b),
      [
        [origin, 2],
        [origin + 30 * DAY, 1],
        [origin + 60 * DAY, 2],
      ],
    );
  });

  t.test('the extent: matching and located counts and the box of the located events', async (t) => {
    const reader = await make(t, READ_WORLD);
    t.same(await reader.extent(null, filter({ datasets: 'fires' })), {
      count: 3,
      located: 2,
      bounds: { west: -179.7, east: 179.6, south: -16.5, north: -16.2 },
    });
    t.same(await reader.extent(null, filter({ startDate: '2030-01-01' })), {
      count: 0,
      located: 0,
      bounds: null,
    });
  });

  pageAndFeatureContract(t, make);
}
