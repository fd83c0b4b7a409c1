import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import t from 'tap';
import { testApp } from '../../helpers/app.ts';
import {
  type ExpectedFilter,
  expectedEvents,
  getJson,
  loadReadFixture,
  type Params,
  SAME_SPOT,
} from '../../helpers/v1-fixture.ts';

// GET /api/v1/events/geo, /events/geo/stats and /events/temporal on a real PostGIS: the shapes,
// field types, and the invariants (feature counts and bucket counts add up to /events' totalDocs
// for the same filters, at every zoom, on the precomputed and on the row-by-row paths).

const WORLD = { north: 90, south: -90, east: 180, west: -180 };
const VIEWS: Array<{ name: string; params: Params }> = [
  { name: 'world', params: { bounds: WORLD } },
  { name: 'Mercator world', params: { bounds: { north: 85, south: -85, east: 180, west: -180 } } },
  {
    name: 'Europe, one catalog',
    params: { bounds: { north: 60, south: 40, east: 20, west: -5 }, catalog: 'news' },
  },
  { name: 'across the antimeridian', params: { bounds: { north: 0, south: -30, east: -170, west: 170 } } },
  { name: 'most of the world', params: { bounds: { north: 80, south: -70, east: 170, west: -170 } } },
  {
    name: 'most of the world, across the antimeridian, dates cutting months',
    params: {
      bounds: { north: 85, south: -85, east: 100, west: 120 },
      startDate: '2023-02-10T10:00:00Z',
      endDate: '2024-07-20T18:30:00Z',
    },
  },
  {
    name: 'Europe, dates cutting months',
    params: {
      bounds: { north: 60, south: 40, east: 20, west: -5 },
      startDate: '2023-02-10T10:00:00Z',
      endDate: '2024-07-20T18:30:00Z',
    },
  },
  {
    name: 'world, dates cutting months',
    params: { bounds: WORLD, startDate: '2023-02-10T10:00:00Z', endDate: '2024-07-20T18:30:00Z' },
  },
  {
    name: 'Berlin, datasets and dates',
    params: {
      bounds: { north: 54, south: 51, east: 15, west: 12 },
      datasets: ['protests', 'fires'],
      startDate: '2023-06-01',
    },
  },
  {
    name: 'custom date field',
    params: { bounds: WORLD, dateField: 'data.startDate', startDate: '2023-01-01', endDate: '2024-06-30' },
  },
];
const ZOOMS = [0, 2, 4, 6, 8, 9, 10, 12, 15, 16, 20];

t.test('geo and temporal on the fixture', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);

  t.test('/events/geo: GeoJSON in the spec shape, every field typed', async (t) => {
    const { status, body } = await getJson(app, '/api/v1/events/geo', { bounds: WORLD, zoom: '8' });
    t.equal(status, 200);
    t.equal(body.type, 'FeatureCollection');
    t.ok(body.features.length > 0);
    let clusters = 0;
    let points = 0;
    for (const feature of body.features) {
      t.equal(feature.type, 'Feature');
      t.equal(feature.geometry.type, 'Point');
      t.equal(feature.geometry.coordinates.length, 2);
      const [longitude, latitude] = feature.geometry.coordinates;
      t.ok(longitude >= -180 && longitude <= 180 && latitude >= -90 && latitude <= 90);
      const properties = feature.properties;
      t.ok(typeof properties.id === 'number' || typeof properties.id === 'string');
      if (properties.type === 'event-cluster') {
        clusters += 1;
        t.type(properties.count, 'number');
        t.ok(properties.count >= 2);
        t.equal(properties.title, undefined);
        if (properties.count <= 10)
          t.equal(properties.eventIds?.length, properties.count, 'small clusters list their ids');
        else t.equal(properties.eventIds, undefined, 'large clusters do not');
      } else {
        points += 1;
        t.equal(properties.type, 'event-point');
        t.type(properties.id, 'number');
        t.type(properties.title, 'string');
        t.equal(properties.count, undefined);
      }
    }
    t.ok(clusters > 0 && points > 0, `${clusters} clusters and ${points} points`);
  });

  t.test('/events/geo: feature counts sum to /events totalDocs, every view and zoom', async (t) => {
    for (const view of VIEWS) {
      const list = await getJson(app, '/api/v1/events', { ...view.params, limit: '1' });
      const total = list.body.pagination.totalDocs;
      t.ok(total > 0, `${view.name}: has events`);
      for (const zoom of ZOOMS) {
        const { status, body } = await getJson(app, '/api/v1/events/geo', {
          ...view.params,
          zoom: String(zoom),
        });
        t.equal(status, 200);
        const sum = body.features.reduce(
          (acc: number, feature: { properties: { count?: number } }) => acc + (feature.properties.count ?? 1),
          0,
        );
        t.equal(sum, total, `${view.name}, zoom ${zoom}`);
        const ids = body.features.flatMap(
          (feature: { properties: { type: string; id: number; eventIds?: number[] } }) =>
            feature.properties.type === 'event-point'
              ? [feature.properties.id]
              : (feature.properties.eventIds ?? []),
        );
        t.equal(new Set(ids).size, ids.length, 'no event listed twice');
      }
    }
  });

  t.test('/events/geo: clusters get finer with the zoom', async (t) => {
    const counts: number[] = [];
    for (const zoom of [0, 4, 8, 12, 16]) {
      const { body } = await getJson(app, '/api/v1/events/geo', { bounds: WORLD, zoom: String(zoom) });
      counts.push(body.features.length);
    }
    for (let i = 1; i < counts.length; i++)
      t.ok((counts[i] ?? 0) >= (counts[i - 1] ?? 0), `features ${counts.join(' <= ')}`);
  });

  t.test(
    '/events/geo: at zoom 16+ events at one exact location form a cluster, others stand alone',
    async (t) => {
      const near = {
        north: SAME_SPOT.latitude + 0.01,
        south: SAME_SPOT.latitude - 0.01,
        east: SAME_SPOT.longitude + 0.01,
        west: SAME_SPOT.longitude - 0.01,
      };
      const { body } = await getJson(app, '/api/v1/events/geo', { bounds: near, zoom: '18' });
      const spot = body.features.find(
        (feature: { geometry: { coordinates: number[] } }) =>
          feature.geometry.coordinates[0] === SAME_SPOT.longitude &&
          feature.geometry.coordinates[1] === SAME_SPOT.latitude,
      );
      t.equal(spot?.properties.type, 'event-cluster');
      t.equal(spot?.properties.count, 6);
      const expectedIds = fixture.events
        .filter((event) => event.title.startsWith('same spot'))
        .map((event) => event.id);
      t.same(spot?.properties.eventIds, expectedIds);
      t.equal(body.capped, false, 'a street-sized box keeps exact locations');
      // The whole world at zoom 16 would be one feature per event: it is clustered coarser instead
      // (domain/read/geo-cap.ts), and says so.
      const world = await getJson(app, '/api/v1/events/geo', { bounds: WORLD, zoom: '16' });
      t.equal(world.body.capped, true, 'the world at zoom 16 is capped');
      const point = world.body.features.find(
        (feature: { properties: { type: string } }) => feature.properties.type === 'event-point',
      );
      const event = fixture.events.find((candidate) => candidate.id === point.properties.id);
      t.equal(point.properties.title, event?.title);
      t.same(point.geometry.coordinates, [event?.longitude, event?.latitude]);
    },
  );

  t.test('/events/geo/stats: nondecreasing breakpoints, p100 the largest cluster', async (t) => {
    const { status, body } = await getJson(app, '/api/v1/events/geo/stats', { zoom: '2' });
    t.equal(status, 200);
    t.same(Object.keys(body).sort(), ['p100', 'p20', 'p40', 'p60', 'p80']);
    const values = [body.p20, body.p40, body.p60, body.p80, body.p100];
    for (const value of values) t.type(value, 'number');
    t.same(
      values,
      [...values].sort((a, b) => a - b),
    );
    const geo = await getJson(app, '/api/v1/events/geo', { bounds: WORLD, zoom: '2' });
    const largest = Math.max(
      ...geo.body.features.map(
        (feature: { properties: { count?: number } }) => feature.properties.count ?? 1,
      ),
    );
    t.equal(body.p100, largest);
    const empty = await getJson(app, '/api/v1/events/geo/stats', { catalog: 'nope' });
    t.same(empty.body, { p20: 0, p40: 0, p60: 0, p80: 0, p100: 0 });
  });

  t.test('/events/temporal: contiguous half-open buckets summing to the total, metadata typed', async (t) => {
    const filters: Params[] = [
      {},
      { catalog: 'news' },
      { startDate: '2023-03-17T13:45:00Z', endDate: '2023-04-02T08:00:00Z' },
      { bounds: { north: 60, south: 40, east: 20, west: -5 } },
      { dateField: 'data.startDate', startDate: '2023-01-01' },
      { targetBuckets: '100', minBuckets: '80', maxBuckets: '120' },
      { targetBuckets: '100' },
      { targetBuckets: '10' },
      { granularity: 'month' },
      { granularity: 'week', datasets: 'fires' },
      { granularity: 'day', startDate: '2024-01-01', endDate: '2024-01-31' },
      { granularity: 'auto' },
    ];
    for (const params of filters) {
      const label = JSON.stringify(params);
      const { status, body } = await getJson(app, '/api/v1/events/temporal', params);
      t.equal(status, 200, label);
      const { histogram, metadata } = body;
      const list = await getJson(app, '/api/v1/events', {
        ...Object.fromEntries(Object.entries(params).filter(([key]) => !/Buckets|granularity/.test(key))),
        limit: '1',
      });
      t.equal(metadata.total, list.body.pagination.totalDocs, `${label}: total equals /events totalDocs`);
      t.equal(
        histogram.reduce((sum: number, bucket: { count: number }) => sum + bucket.count, 0),
        metadata.total,
        `${label}: buckets sum to the total`,
      );
      if (params.granularity) {
        t.notOk('bucketCount' in metadata, `${label}: the earlier variant has no bucketCount`);
        t.notOk('bucketSizeSeconds' in metadata, `${label}: nor bucketSizeSeconds`);
      } else {
        t.equal(metadata.bucketCount, histogram.length);
      }
      for (let i = 0; i < histogram.length; i++) {
        const bucket = histogram[i];
        t.type(bucket.date, 'string');
        t.type(bucket.dateEnd, 'string');
        t.type(bucket.count, 'number');
        t.ok(Date.parse(bucket.date) < Date.parse(bucket.dateEnd));
        if (i > 0) t.equal(bucket.date, histogram[i - 1].dateEnd, 'contiguous');
      }
      t.ok(
        Date.parse(histogram[0].date) <= Date.parse(metadata.dateRange.min),
        'the first bucket holds the first event',
      );
      t.ok(
        Date.parse(metadata.dateRange.max) < Date.parse(histogram.at(-1).dateEnd),
        'the last bucket holds the last event',
      );
      t.type(metadata.counts.datasets, 'number');
      t.type(metadata.counts.catalogs, 'number');
      t.ok(
        Array.isArray(metadata.topDatasets) &&
          metadata.topDatasets.every((name: unknown) => typeof name === 'string'),
      );
      t.ok(
        Array.isArray(metadata.topCatalogs) &&
          metadata.topCatalogs.every((name: unknown) => typeof name === 'string'),
      );
      if (!params.granularity) {
        t.type(metadata.bucketSizeSeconds, 'number');
        // Without its own min or max, a targetBuckets outside 20-50 widens the default bound to it.
        const target = params.targetBuckets ? Number(params.targetBuckets) : 30;
        const min = params.minBuckets ? Number(params.minBuckets) : Math.min(20, target);
        const max = params.maxBuckets ? Number(params.maxBuckets) : Math.max(50, target);
        t.ok(histogram.length >= min && histogram.length <= max, `${label}: ${histogram.length} buckets`);
        for (const bucket of histogram) {
          t.equal((Date.parse(bucket.dateEnd) - Date.parse(bucket.date)) / 1000, metadata.bucketSizeSeconds);
        }
      }
    }
  });

  t.test('/events/temporal: empty buckets are present; calendar months are aligned', async (t) => {
    const { body } = await getJson(app, '/api/v1/events/temporal', {
      datasets: 'protests',
      granularity: 'month',
    });
    for (const bucket of body.histogram) {
      t.match(bucket.date, /^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    }
    t.same(Object.keys(body.metadata).sort(), ['counts', 'dateRange', 'topCatalogs', 'topDatasets', 'total']);
    const sparse = await getJson(app, '/api/v1/events/temporal', {
      bounds: { north: 53, south: 52, east: 14, west: 13 },
      granularity: 'day',
    });
    t.ok(
      sparse.body.histogram.some((bucket: { count: number }) => bucket.count === 0),
      'zero-count days are listed',
    );
    const expected = expectedEvents(fixture, { bounds: { north: 53, south: 52, east: 14, west: 13 } });
    t.equal(sparse.body.metadata.total, expected.length);
  });

  t.test(
    '/events/temporal with bounds: every bucket holds exactly the fixture events of its range',
    async (t) => {
      // Whole-world boxes are answered from the counts without bounds less the events outside (no
      // location, or beyond the box's latitudes: the fixture has events near the pole); calendar months
      // in boxes from the month counts of the cells inside; the rest from the rows.
      const MERCATOR_WORLD = { north: 85.06, south: -85.06, east: 180, west: -180 };
      const EUROPE = { north: 60, south: 40, east: 20, west: -5 };
      const PACIFIC = { north: 10, south: -50, east: -150, west: 150 };
      const MOST = { north: 80, south: -70, east: 170, west: -170 };
      const MOST_ACROSS = { north: 85, south: -85, east: 100, west: 120 };
      const cases: Array<{ params: Params; expected: ExpectedFilter }> = [
        { params: { bounds: WORLD }, expected: { bounds: WORLD } },
        { params: { bounds: MERCATOR_WORLD }, expected: { bounds: MERCATOR_WORLD } },
        {
          params: {
            bounds: MERCATOR_WORLD,
            catalog: 'news',
            startDate: '2023-02-10T10:00:00Z',
            endDate: '2024-07-20',
          },
          expected: {
            bounds: MERCATOR_WORLD,
            catalog: 'news',
            from: '2023-02-10T10:00:00Z',
            to: '2024-07-21',
          },
        },
        {
          params: {
            bounds: WORLD,
            granularity: 'month',
            startDate: '2023-02-10T10:00:00Z',
            endDate: '2024-07-20',
          },
          expected: { bounds: WORLD, from: '2023-02-10T10:00:00Z', to: '2024-07-21' },
        },
        { params: { bounds: MERCATOR_WORLD, granularity: 'week' }, expected: { bounds: MERCATOR_WORLD } },
        { params: { bounds: EUROPE, granularity: 'month' }, expected: { bounds: EUROPE } },
        {
          params: {
            bounds: EUROPE,
            granularity: 'month',
            datasets: ['protests', 'fires'],
            startDate: '2023-03-15T12:00:00Z',
            endDate: '2024-05-10',
          },
          expected: {
            bounds: EUROPE,
            datasets: ['protests', 'fires'],
            from: '2023-03-15T12:00:00Z',
            to: '2024-05-11',
          },
        },
        { params: { bounds: PACIFIC, granularity: 'month' }, expected: { bounds: PACIFIC } },
        {
          params: { bounds: PACIFIC, granularity: 'month', startDate: '2023-06-20', endDate: '2024-02-03' },
          expected: { bounds: PACIFIC, from: '2023-06-20', to: '2024-02-04' },
        },
        { params: { bounds: PACIFIC, targetBuckets: '12', minBuckets: '6' }, expected: { bounds: PACIFIC } },
        // Day-aligned bins in a box: the months no bin boundary cuts from the month counts, the
        // others and the whole days at the ends from the day counts (unfiltered), the rest from rows.
        { params: { bounds: EUROPE }, expected: { bounds: EUROPE } },
        { params: { bounds: EUROPE, targetBuckets: '100', maxBuckets: '200' }, expected: { bounds: EUROPE } },
        { params: { bounds: EUROPE, granularity: 'week' }, expected: { bounds: EUROPE } },
        {
          params: { bounds: EUROPE, startDate: '2023-03-15T12:00:00Z', endDate: '2024-05-10' },
          expected: { bounds: EUROPE, from: '2023-03-15T12:00:00Z', to: '2024-05-11' },
        },
        {
          params: {
            bounds: EUROPE,
            granularity: 'month',
            startDate: '2023-03-15T12:00:00Z',
            endDate: '2024-05-10',
          },
          expected: { bounds: EUROPE, from: '2023-03-15T12:00:00Z', to: '2024-05-11' },
        },
        { params: { bounds: PACIFIC, targetBuckets: '40' }, expected: { bounds: PACIFIC } },
        // Most of the world: the counts without bounds less the events outside.
        { params: { bounds: MOST }, expected: { bounds: MOST } },
        {
          params: { bounds: MOST, granularity: 'month', catalog: 'news' },
          expected: { bounds: MOST, catalog: 'news' },
        },
        {
          params: { bounds: MOST_ACROSS, startDate: '2023-02-10T10:00:00Z', endDate: '2024-07-20' },
          expected: { bounds: MOST_ACROSS, from: '2023-02-10T10:00:00Z', to: '2024-07-21' },
        },
      ];
      for (const { params, expected } of cases) {
        const label = JSON.stringify(params);
        const { status, body } = await getJson(app, '/api/v1/events/temporal', params);
        t.equal(status, 200, label);
        const events = expectedEvents(fixture, expected);
        t.ok(events.length > 0, `${label}: the fixture has events in the box`);
        const counts = body.histogram.map((bucket: { date: string; dateEnd: string }) => {
          const from = Date.parse(bucket.date);
          const to = Date.parse(bucket.dateEnd);
          return events.filter(
            (e) => Date.parse(e.eventTimestamp) >= from && Date.parse(e.eventTimestamp) < to,
          ).length;
        });
        t.same(
          body.histogram.map((bucket: { count: number }) => bucket.count),
          counts,
          `${label}: bucket by bucket`,
        );
        t.equal(body.metadata.total, events.length, `${label}: total`);
        const instants = events.map((e) => Date.parse(e.eventTimestamp));
        t.same(
          [Date.parse(body.metadata.dateRange.min), Date.parse(body.metadata.dateRange.max)],
          [Math.min(...instants), Math.max(...instants)],
          `${label}: the first and last events`,
        );
        t.equal(
          body.histogram.reduce((sum: number, bucket: { count: number }) => sum + bucket.count, 0),
          events.length,
          `${label}: the buckets hold every event`,
        );
        const list = await getJson(app, '/api/v1/events', {
          ...Object.fromEntries(Object.entries(params).filter(([key]) => !/Buckets|granularity/.test(key))),
          limit: '1',
        });
        t.equal(list.body.pagination.totalDocs, events.length, `${label}: /events totalDocs`);
      }
    },
  );

  t.test('/events/temporal: nothing matches', async (t) => {
    const { status, body } = await getJson(app, '/api/v1/events/temporal', { catalog: 'nope' });
    t.equal(status, 200);
    t.same(body, {
      histogram: [],
      metadata: {
        total: 0,
        dateRange: { min: null, max: null },
        bucketSizeSeconds: null,
        bucketCount: 0,
        counts: { datasets: 0, catalogs: 0 },
        topDatasets: [],
        topCatalogs: [],
      },
    });
  });
});
