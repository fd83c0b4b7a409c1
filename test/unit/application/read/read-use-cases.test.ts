import t, { type Test } from 'tap';
import { buildHistogram } from '../../../../src/application/read/build-histogram.ts';
import { clusterEvents } from '../../../../src/application/read/cluster-events.ts';
import { eventCount, listEvents } from '../../../../src/application/read/list-events.ts';
import { parseCursor } from '../../../../src/domain/read/event-cursor.ts';
import { parseEventSort } from '../../../../src/domain/read/sort.ts';
import type { EventReader } from '../../../../src/ports/read/event-reader.ts';
import { exportEvents } from '../../../../src/application/read/export-events.ts';
import { findEventExtent } from '../../../../src/application/read/find-event-extent.ts';
import { renderTile } from '../../../../src/application/read/render-tile.ts';
import { summariseClusterSizes } from '../../../../src/application/read/summarise-cluster-sizes.ts';
import { clusterLevel } from '../../../../src/domain/read/clustering.ts';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { fakeEventReader, fakeExporter, fakeTileReader } from './read-use-case-fakes.ts';
import { READ_WORLD } from '../../../contracts/read/event-reader.ts';
import { inMemoryEventReader } from '../../../fakes/read/event-reader.ts';

// The read use cases on fakes of the read ports: what each checks before it asks the read model,
// what it asks for, and what it makes of the answer. Where only the answer matters, the in-memory
// read model (test/fakes/read, held to the same suite as PostGIS) holds the contract's world; the
// recording fakes stay where a test needs to see the calls.

/** The in-memory read model with the behaviour suite's world. */
const readModel = { events: inMemoryEventReader(READ_WORLD) };

const viewer = null;

/** The promise is refused with a ValidationError naming `field` (the spec's 400). */
async function refusedFor(t: Test, promise: Promise<unknown>, field: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (cause: unknown) => cause,
  );
  t.ok(error instanceof ValidationError, `refused: ${String(error)}`);
  t.equal((error as ValidationError).field, field);
}
const box = (north: number, south: number, east: number, west: number) =>
  JSON.stringify({ north, south, east, west });
const perDataset = [
  { datasetId: 1, datasetTitle: 'Fires', catalogId: 10, catalogTitle: 'Nature', count: 5 },
  { datasetId: 2, datasetTitle: 'Floods', catalogId: 10, catalogTitle: 'Nature', count: 3 },
  { datasetId: 3, datasetTitle: 'Protests', catalogId: 20, catalogTitle: 'News', count: 4 },
];

t.test(
  'the temporal histogram: calendar months from the first event to the last, empty ones filled',
  async (t) => {
    const { port, calls } = fakeEventReader({
      timeRange: async () => ({ min: '2024-01-15T10:00:00.000Z', max: '2024-03-02T08:00:00.000Z' }),
      countByDataset: async () => perDataset,
      histogram: async () =>
        new Map([
          [Date.parse('2024-01-01T00:00:00Z') / 1000, 7],
          [Date.parse('2024-03-01T00:00:00Z') / 1000, 5],
        ]),
    });
    const result = await buildHistogram({ events: port }, viewer, { granularity: 'month' });
    t.same(
      result.histogram.map((bucket) => [bucket.date.slice(0, 10), bucket.count]),
      [
        ['2024-01-01', 7],
        ['2024-02-01', 0],
        ['2024-03-01', 5],
      ],
    );
    t.same(calls.find((call) => call.method === 'histogram')?.args[2], {
      kind: 'calendar',
      granularity: 'month',
    });
    t.equal(result.metadata.total, 12, 'the total is the sum over the datasets');
    t.same(result.metadata.counts, { datasets: 3, catalogs: 2 });
    t.same(result.metadata.topCatalogs, ['Nature', 'News'], 'catalogs by their count');
    t.same(result.metadata.dateRange, { min: '2024-01-15T10:00:00.000Z', max: '2024-03-02T08:00:00.000Z' });
    t.notOk('bucketSizeSeconds' in result.metadata, 'the granularity variant has no bucket size');
  },
);

t.test('the temporal histogram of nothing: no buckets, and no histogram asked for', async (t) => {
  const { port, calls } = fakeEventReader({ timeRange: async () => null, countByDataset: async () => [] });
  const result = await buildHistogram({ events: port }, viewer, {});
  t.same(result.histogram, []);
  t.equal(result.metadata.total, 0);
  t.notOk(calls.some((call) => call.method === 'histogram'));
});

t.test('fixed buckets: one size for the range, contiguous from the first bucket to the last', async (t) => {
  const result = await buildHistogram(readModel, viewer, { targetBuckets: '10' });
  const size = result.metadata.bucketSizeSeconds as number;
  t.ok(size > 0, `${size} s buckets`);
  t.equal(result.metadata.bucketCount, result.histogram.length);
  t.ok(result.histogram.length >= 5 && result.histogram.length <= 20, `${result.histogram.length} buckets`);
  t.ok(
    result.histogram.every((bucket, n) => n === 0 || bucket.date === result.histogram[n - 1]?.dateEnd),
    'contiguous',
  );
  t.ok(
    result.histogram.every((bucket) => Date.parse(bucket.dateEnd) - Date.parse(bucket.date) === size * 1000),
    'one size',
  );
  t.equal(
    result.histogram.reduce((sum, bucket) => sum + bucket.count, 0),
    READ_WORLD.events.length,
    'every event in one bucket',
  );
  t.equal(result.metadata.total, READ_WORLD.events.length);
});

t.test('bad parameters are refused before the read model is asked', async (t) => {
  const { port, calls } = fakeEventReader({});
  await refusedFor(
    t,
    buildHistogram({ events: port }, viewer, { granularity: 'month', targetBuckets: '5' }),
    'granularity',
  );
  await refusedFor(t, buildHistogram({ events: port }, viewer, { granularity: 'year' }), 'granularity');
  await t.rejects(
    clusterEvents({ events: port }, viewer, { zoom: '3' }),
    ValidationError,
    'geo needs bounds',
  );
  await refusedFor(t, summariseClusterSizes({ events: port }, viewer, { zoom: '99' }), 'zoom');
  await t.rejects(findEventExtent({ events: port }, viewer, { startDate: 'soon' }), ValidationError);
  t.same(calls, []);
});

t.test('map clusters: the zoom decides the level, a box too large for it is clustered coarser', async (t) => {
  const { port, calls } = fakeEventReader({ clusterFeatures: async () => '[]' });
  const small = await clusterEvents({ events: port }, viewer, {
    zoom: '10',
    bounds: box(52.6, 52.4, 13.6, 13.2),
  });
  t.same(JSON.parse(small), { type: 'FeatureCollection', capped: false, features: [] });
  t.equal(calls[0]?.args[2], clusterLevel(10));
  const world = await clusterEvents({ events: port }, viewer, {
    zoom: '10',
    bounds: box(85, -85, 180, -180),
  });
  t.equal(JSON.parse(world).capped, true);
  const coarser = calls[1]?.args[2] as number;
  t.ok(coarser < (clusterLevel(10) as number), `level ${coarser} for the world at zoom 10`);
});

t.test(
  'cluster-size breakpoints: the world when no bounds are given, zeros when nothing matches',
  async (t) => {
    const { port, calls } = fakeEventReader({ clusterSizePercentiles: async () => null });
    t.same(await summariseClusterSizes({ events: port }, viewer, {}), {
      p20: 0,
      p40: 0,
      p60: 0,
      p80: 0,
      p100: 0,
    });
    const filter = calls[0]?.args[1] as { bounds: unknown };
    t.same(filter.bounds, { north: 90, south: -90, east: 180, west: -180 });
    t.same(calls[0]?.args[3], [0.2, 0.4, 0.6, 0.8, 1]);
  },
);

t.test('exports: by id unless asked otherwise, and only in an order keyset paging can walk', async (t) => {
  const exported = { head: '', batches: (async function* () {})(), separator: '', tail: '', version: 'v1' };
  const { port, calls } = fakeExporter({ exportEvents: async () => exported });
  await refusedFor(t, exportEvents({ exporter: port }, viewer, { sort: 'title' }, 'csv'), 'sort');
  t.same(calls, [], 'a refused sort reads nothing');
  const answer = await exportEvents({ exporter: port }, viewer, {}, 'geojson');
  t.ok(answer.kind === 'stream' && answer.text === exported, 'without a file store: streamed');
  t.match(calls[0]?.args[2], { text: 'id' });
  t.equal(calls[0]?.args[3], 'geojson');
});

t.test('exports: a kept file of the current version is answered without exporting', async (t) => {
  const kept = { path: '/kept/file', bytes: 10 };
  const asked: string[] = [];
  const files = {
    find: async (key: string) => {
      asked.push(key);
      return kept;
    },
    create: async () => t.fail('nothing is written') as never,
    reserve: async () => t.fail('nothing is written') as never,
    clear: async () => {},
  };
  const { port, calls } = fakeExporter({ versionOf: async () => 'v7' });
  const answer = await exportEvents({ exporter: port, files }, viewer, { catalog: 'news' }, 'csv');
  t.same(answer, { kind: 'file', file: kept, version: asked[0] });
  t.match(asked[0], /"csv".*"v7"/, 'looked up by format and data version');
  t.same(
    calls.map((call) => call.method),
    ['versionOf'],
    'no export started',
  );
});

t.test('exports: a file format needs a file store', async (t) => {
  const { port } = fakeExporter({});
  await t.rejects(exportEvents({ exporter: port }, viewer, {}, 'gpkg'), { code: 'EXPORT_FILES_OFF' });
});

t.test('tiles: the coordinates are checked before the tile is read', async (t) => {
  const { port, calls } = fakeTileReader({
    dataVersion: async () => '7-42',
    vectorTile: async () => new Uint8Array([1, 2]),
  });
  await refusedFor(t, renderTile({ tiles: port }, viewer, { z: '1', x: '0', y: '0.png' }, {}), 'y');
  await refusedFor(t, renderTile({ tiles: port }, viewer, { z: '1', x: '2', y: '0.mvt' }, {}), 'x');
  t.same(calls, []);
  t.same(await renderTile({ tiles: port }, viewer, { z: '1', x: '1', y: '0.mvt' }, {}), {
    rule: 'revalidate',
    tile: new Uint8Array([1, 2]),
    version: '7-42',
  });
  t.same(calls.at(-1)?.args[2], { z: 1, x: 1, y: 0 });
});

t.test('tiles: a URL at the current version is immutable; at another, not drawn', async (t) => {
  const { port, calls } = fakeTileReader({
    dataVersion: async () => '7-42',
    vectorTile: async () => new Uint8Array([3]),
  });
  const at = (v: string) => renderTile({ tiles: port }, viewer, { z: '0', x: '0', y: '0.mvt' }, { v });
  t.match(await at('7-42'), { rule: 'immutable', version: '7-42' });
  const drawn = calls.filter((call) => call.method === 'vectorTile').length;
  t.same(await at('6-40'), { rule: 'moved', version: '7-42' }, 'an old version is sent to the current one');
  t.equal(calls.filter((call) => call.method === 'vectorTile').length, drawn, 'and no tile is drawn for it');
});

t.test('the extent of the filtered events, from the read model', async (t) => {
  t.same(await findEventExtent(readModel, viewer, { datasets: 'fires' }), {
    count: 3,
    located: 2,
    bounds: { west: -179.7, east: 179.6, south: -16.5, north: -16.2 },
  });
  await t.rejects(findEventExtent(readModel, viewer, { startDate: 'soon' }), ValidationError);
});

t.test(
  'listEvents: the page answered as bytes around the reader bytes, its last event found in them',
  async (t) => {
    // Titles beyond Latin-1, and the boundary's characters inside a string (escaped, so not a boundary).
    const titles = ['Zürich', '東京 "},{"id": 東京', 'São Paulo 😀'];
    const events = titles.map((title, index) => ({
      id: index + 1,
      title,
      dataset: { id: 1, title: 'Städte', catalog: 'welt' },
      data: { note: '},{"id":', n: index },
      location: null,
      eventTimestamp: `2024-0${index + 1}-01T00:00:00.000Z`,
      isValid: true,
    }));
    const pages: Array<{ sort?: string; page?: unknown }> = [];
    const reader = {
      async listEventsPage(_viewer: unknown, _filter: unknown, sort: { text: string }, page: unknown) {
        pages.push({ sort: sort.text, page });
        return { eventsJson: Buffer.from(JSON.stringify(events)), totalDocs: 7, signature: 'v1' };
      },
    } as unknown as EventReader;

    const first = await listEvents({ events: reader }, null, { limit: '3', sort: 'id' });
    const answer = JSON.parse(first.body.toString('utf8')) as {
      events: typeof events;
      pagination: { totalDocs: number; hasNextPage: boolean };
      nextCursor: string | null;
    };
    t.same(answer.events, events, 'the events as the reader wrote them');
    t.equal(answer.pagination.totalDocs, 7);
    t.equal(answer.pagination.hasNextPage, true);
    t.equal(first.signature, 'v1');
    const after = parseCursor(answer.nextCursor, parseEventSort('id'));
    t.same(after, { id: 3, value: null }, 'the next page starts after the last event');

    // A keyset page counts its events in the bytes: three of a limit of three, so there is a next one.
    const keyset = await listEvents({ events: reader }, null, {
      limit: '3',
      sort: 'id',
      cursor: answer.nextCursor ?? '',
    });
    const next = JSON.parse(keyset.body.toString('utf8')) as { nextCursor: string | null };
    t.not(next.nextCursor, null, 'a full keyset page has a page after it');
    t.equal(eventCount(Buffer.from(JSON.stringify(events))), 3);
    t.equal(eventCount(Buffer.from('[]')), 0);
  },
);
