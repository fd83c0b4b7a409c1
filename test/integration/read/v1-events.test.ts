import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import type { Test } from 'tap';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { testApp } from '../../helpers/app.ts';
import {
  type ExpectedFilter,
  expectedEvents,
  type Fixture,
  getJson,
  loadReadFixture,
  type Params,
} from '../../helpers/v1-fixture.ts';

// GET /api/v1/events, /events/stats, /sources/stats, /events/bounds, /data-sources and
// /datasets/{id}/schema/infer on a real PostGIS, checked against counts computed in JavaScript from
// the fixture, and every parameter error as a 400 naming the parameter.

function checkEventShape(t: Test, event: Record<string, unknown>) {
  t.type(event.id, 'number');
  const dataset = event.dataset as Record<string, unknown>;
  t.type(dataset.id, 'number');
  t.type(dataset.title, 'string');
  t.type(dataset.catalog, 'string');
  t.type(event.data, 'object');
  t.notOk(Array.isArray(event.data));
  if (event.location !== null) {
    const location = event.location as Record<string, unknown>;
    t.type(location.longitude, 'number');
    t.type(location.latitude, 'number');
  }
  t.type(event.eventTimestamp, 'string');
  t.ok(!Number.isNaN(Date.parse(event.eventTimestamp as string)));
  t.type(event.isValid, 'boolean');
  // Events of the fixture have their own coordinates (or none): nothing geocoded them.
  t.same(event.locatedBy, event.location ? { method: 'coordinates' } : null);
  t.type(event.title, 'string', 'the fixture maps a title for every event');
  t.same(Object.keys(event).sort(), [
    'data',
    'dataset',
    'eventTimestamp',
    'id',
    'isValid',
    'locatedBy',
    'location',
    'provenance',
    'title',
  ]);
  // Additive (issue 38 §5): the fixture's events were stored outside an import.
  t.match(event.provenance, { shown: true, importJob: null, row: null, storedAt: String, changedAt: String });
}

/** The parameters of the API and the equivalent filter on the fixture. */
const FILTERS: Array<{
  name: string;
  params: Params;
  expected: ExpectedFilter;
}> = [
  { name: 'no filter', params: {}, expected: {} },
  { name: 'catalog', params: { catalog: 'news' }, expected: { catalog: 'news' } },
  {
    name: 'datasets repeated',
    params: { datasets: ['fires', 'exhibitions'] },
    expected: { datasets: ['fires', 'exhibitions'] },
  },
  {
    name: 'date range cutting through days and months',
    params: { startDate: '2023-03-17T13:45:00Z', endDate: '2024-02-09T08:00:00Z' },
    expected: { from: '2023-03-17T13:45:00Z', to: '2024-02-09T08:00:00.001Z' },
  },
  {
    name: 'whole days',
    params: { startDate: '2023-06-01', endDate: '2023-08-31' },
    expected: { from: '2023-06-01T00:00:00Z', to: '2023-09-01T00:00:00Z' },
  },
  {
    name: 'bounds over Europe',
    params: { bounds: { north: 60, south: 40, east: 20, west: -5 } },
    expected: { bounds: { north: 60, south: 40, east: 20, west: -5 } },
  },
  {
    name: 'bounds across the antimeridian',
    params: { bounds: { north: 0, south: -30, east: -170, west: 170 } },
    expected: { bounds: { north: 0, south: -30, east: -170, west: 170 } },
  },
  {
    name: 'world bounds, a dataset and dates',
    params: {
      bounds: { north: 90, south: -90, east: 180, west: -180 },
      datasets: 'protests',
      startDate: '2023-05-05T05:05:05Z',
    },
    expected: {
      bounds: { north: 90, south: -90, east: 180, west: -180 },
      datasets: ['protests'],
      from: '2023-05-05T05:05:05Z',
    },
  },
  {
    // A map view at zoom 10: page and total come from one pass over the box's rows.
    name: 'city box and datasets',
    params: { bounds: { north: 52.8, south: 52.2, east: 14.3, west: 12.5 }, datasets: ['protests', 'fires'] },
    expected: {
      bounds: { north: 52.8, south: 52.2, east: 14.3, west: 12.5 },
      datasets: ['protests', 'fires'],
    },
  },
  {
    name: 'small box across the antimeridian, a catalog and a start date',
    params: {
      bounds: { north: -15.6, south: -17.1, east: -179.1, west: 179.3 },
      catalog: 'news',
      startDate: '2023-06-01T10:00:00Z',
    },
    expected: {
      bounds: { north: -15.6, south: -17.1, east: -179.1, west: 179.3 },
      catalog: 'news',
      from: '2023-06-01T10:00:00Z',
    },
  },
  {
    name: 'custom date field data.startDate',
    params: { dateField: 'data.startDate', startDate: '2023-01-01', endDate: '2023-12-31' },
    expected: { dateField: 'startDate', from: '2023-01-01T00:00:00Z', to: '2024-01-01T00:00:00Z' },
  },
];

const WORLD_BOUNDS = { north: 90, south: -90, east: 180, west: -180 };

t.test('read API on the fixture', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture: Fixture = await loadReadFixture(db.pool);

  t.test('/events: the spec shape, every field typed, pagination with all eight fields', async (t) => {
    const { status, body } = await getJson(app, '/api/v1/events', { limit: '7', page: '2' });
    t.equal(status, 200);
    t.same(Object.keys(body).sort(), ['events', 'nextCursor', 'pagination']);
    t.type(
      body.nextCursor,
      'string',
      'the cursor of the next page (keyset paging: v1-events-cursor.test.ts)',
    );
    t.equal(body.events.length, 7);
    for (const event of body.events) checkEventShape(t, event);
    t.same(body.pagination, {
      page: 2,
      limit: 7,
      totalDocs: fixture.events.length,
      totalPages: Math.ceil(fixture.events.length / 7),
      hasNextPage: true,
      hasPrevPage: true,
      nextPage: 3,
      prevPage: 1,
    });
    const withoutLocation = await getJson(app, '/api/v1/events', { limit: '1000' });
    t.ok(
      withoutLocation.body.events.some((event: { location: unknown }) => event.location === null),
      'events without a location have location null',
    );
    const oneEvent = withoutLocation.body.events.find(
      (event: { id: number }) => event.id === fixture.events[0]?.id,
    );
    t.same(oneEvent?.dataset, { id: fixture.datasetIds.protests, title: 'Protests', catalog: 'news' });
    t.same(oneEvent?.location, {
      longitude: fixture.events[0]?.longitude,
      latitude: fixture.events[0]?.latitude,
    });
  });

  t.test('/events: default limit 100, sorted by -eventTimestamp', async (t) => {
    const { body } = await getJson(app, '/api/v1/events');
    t.equal(body.events.length, 100);
    t.equal(body.pagination.limit, 100);
    const times = body.events.map((event: { eventTimestamp: string }) => event.eventTimestamp);
    t.same(times, [...times].sort().reverse());
    const newest = [...fixture.events].sort((a, b) => b.eventTimestamp.localeCompare(a.eventTimestamp))[0];
    t.equal(body.events[0].id, newest?.id);
  });

  t.test('/events: sort by id, isValid and data.<field>, both directions', async (t) => {
    const byId = await getJson(app, '/api/v1/events', { sort: 'id', limit: '5' });
    t.same(
      byId.body.events.map((event: { id: number }) => event.id),
      fixture.events.slice(0, 5).map((event) => event.id),
    );
    const byMag = await getJson(app, '/api/v1/events', { sort: '-data.mag', limit: '1000' });
    const mags = byMag.body.events.map((event: { data: { mag: number } }) => event.data.mag);
    t.same(
      mags,
      [...mags].sort((a, b) => b - a),
      'numbers in data sort as numbers',
    );
    const bySeq = await getJson(app, '/api/v1/events', { sort: 'data.seq', limit: '3' });
    t.same(
      bySeq.body.events.map((event: { data: { seq: number } }) => event.data.seq),
      [0, 1, 2],
    );
    const byValid = await getJson(app, '/api/v1/events', { sort: 'isValid', limit: '3' });
    t.equal(byValid.status, 200);
  });

  t.test('/events: every filter gives exactly the expected events', async (t) => {
    for (const filter of FILTERS) {
      const expected = expectedEvents(fixture, filter.expected);
      t.ok(expected.length > 0, `${filter.name}: the fixture has matches`);
      const { status, body } = await getJson(app, '/api/v1/events', {
        ...filter.params,
        limit: '1000',
        sort: 'id',
      });
      t.equal(status, 200, filter.name);
      t.equal(body.pagination.totalDocs, expected.length, `${filter.name}: totalDocs`);
      t.same(
        body.events.map((event: { id: number }) => event.id),
        expected.map((event) => event.id),
        `${filter.name}: the events`,
      );
    }
  });

  t.test('/events: a city box pages by time, by dataset and by data like any filter', async (t) => {
    const bounds = { north: 52.8, south: 52.2, east: 14.3, west: 12.5 };
    const inBox = expectedEvents(fixture, { bounds });
    t.ok(inBox.length > 6, 'the fixture has enough events in the box');
    const newestFirst = [...inBox].sort(
      (a, b) => b.eventTimestamp.localeCompare(a.eventTimestamp) || b.id - a.id,
    );
    const second = await getJson(app, '/api/v1/events', { bounds, limit: '3', page: '2' });
    t.same(
      second.body.events.map((event: { id: number }) => event.id),
      newestFirst.slice(3, 6).map((event) => event.id),
    );
    for (const event of second.body.events) checkEventShape(t, event);
    t.same(second.body.pagination.totalDocs, inBox.length);
    t.equal(second.body.pagination.totalPages, Math.ceil(inBox.length / 3));
    const byDataset = await getJson(app, '/api/v1/events', { bounds, sort: '-dataset', limit: '1000' });
    t.same(
      byDataset.body.events.map((event: { id: number }) => event.id),
      [...inBox]
        .sort(
          (a, b) =>
            (fixture.datasetIds[b.datasetSlug] ?? 0) - (fixture.datasetIds[a.datasetSlug] ?? 0) ||
            b.id - a.id,
        )
        .map((event) => event.id),
    );
    const bySeq = await getJson(app, '/api/v1/events', { bounds, sort: 'data.seq', limit: '1000' });
    t.same(
      bySeq.body.events.map((event: { id: number }) => event.id),
      inBox.map((event) => event.id),
    );
    t.equal(bySeq.body.pagination.totalDocs, inBox.length);
  });

  t.test('/events: an unknown catalog or dataset matches nothing', async (t) => {
    const { body } = await getJson(app, '/api/v1/events', { catalog: 'nope' });
    t.equal(body.pagination.totalDocs, 0);
    t.same(body.events, []);
    t.equal(body.pagination.totalPages, 0);
  });

  t.test('/events/stats: per catalog and per dataset, totals agree with /events', async (t) => {
    for (const filter of FILTERS) {
      const expected = expectedEvents(fixture, filter.expected);
      for (const groupBy of ['catalog', 'dataset'] as const) {
        const { status, body } = await getJson(app, '/api/v1/events/stats', { ...filter.params, groupBy });
        t.equal(status, 200);
        t.equal(body.groupedBy, groupBy);
        t.equal(body.total, expected.length, `${filter.name} by ${groupBy}`);
        for (const item of body.items) {
          t.type(item.id, 'number');
          t.type(item.name, 'string');
          t.type(item.count, 'number');
        }
        const key = groupBy === 'catalog' ? 'catalogSlug' : 'datasetSlug';
        const ids = groupBy === 'catalog' ? fixture.catalogIds : fixture.datasetIds;
        for (const [slug, id] of Object.entries(ids)) {
          const count = expected.filter((event) => event[key] === slug).length;
          const item = body.items.find((candidate: { id: number }) => candidate.id === id);
          t.equal(item?.count ?? 0, count, `${filter.name}: ${slug}`);
        }
      }
    }
  });

  t.test('/sources/stats', async (t) => {
    const { status, body } = await getJson(app, '/api/v1/sources/stats');
    t.equal(status, 200);
    t.equal(body.totalEvents, fixture.events.length);
    t.equal(
      body.datasetCounts[String(fixture.datasetIds.fires)],
      expectedEvents(fixture, { datasets: ['fires'] }).length,
    );
    t.equal(
      body.catalogCounts[String(fixture.catalogIds.science)],
      expectedEvents(fixture, { catalog: 'science' }).length,
    );
    for (const value of [...Object.values(body.catalogCounts), ...Object.values(body.datasetCounts)]) {
      t.type(value, 'number');
    }
  });

  t.test('/events/bounds: the box around the located matching events', async (t) => {
    // Everything and each catalog (the large ones' edges come from the spatial index, answer-path.ts
    // extentAnswer), a dataset and a dated view (from the rows): each side exact.
    const views: Array<{ query: Record<string, string>; expected: Parameters<typeof expectedEvents>[1] }> = [
      { query: {}, expected: {} },
      ...Object.keys(fixture.catalogIds).map((catalog) => ({ query: { catalog }, expected: { catalog } })),
      { query: { datasets: 'protests' }, expected: { datasets: ['protests'] } },
      {
        query: { startDate: '2023-02-10T10:00:00Z', endDate: '2024-07-20T18:30:00Z' },
        expected: { from: '2023-02-10T10:00:00Z', to: '2024-07-20T18:30:00.001Z' },
      },
    ];
    for (const view of views) {
      const { status, body } = await getJson(app, '/api/v1/events/bounds', view.query);
      const label = JSON.stringify(view.query);
      t.equal(status, 200, label);
      const expected = expectedEvents(fixture, view.expected);
      const located = expected.filter((event) => event.longitude !== null && event.latitude !== null);
      const longitudes = located.map((event) => event.longitude ?? 0);
      const latitudes = located.map((event) => event.latitude ?? 0);
      if (Object.keys(view.query).length === 0)
        t.ok(located.length < expected.length, 'the fixture has unlocated events: located is not the count');
      t.equal(body.count, expected.length, `${label}: count`);
      t.equal(body.located, located.length, `${label}: located`);
      t.same(
        body.bounds,
        {
          west: Math.min(...longitudes),
          east: Math.max(...longitudes),
          south: Math.min(...latitudes),
          north: Math.max(...latitudes),
        },
        `${label}: each side`,
      );
    }
    const none = await getJson(app, '/api/v1/events/bounds', { catalog: 'nope' });
    t.same(none.body, { bounds: null, count: 0, located: 0 });
  });

  t.test('/data-sources: catalogs with datasets, counts and declared date fields', async (t) => {
    const { status, body } = await getJson(app, '/api/v1/data-sources');
    t.equal(status, 200);
    t.equal(body.totalEvents, fixture.events.length);
    const science = body.catalogs.find((catalog: { slug: string }) => catalog.slug === 'science');
    t.equal(science.title, 'Science');
    t.equal(science.eventCount, expectedEvents(fixture, { catalog: 'science' }).length);
    t.same(science.datasets[0].dateFields, ['startDate']);
    for (const catalog of body.catalogs) {
      t.type(catalog.id, 'number');
      for (const dataset of catalog.datasets) {
        t.type(dataset.id, 'number');
        t.type(dataset.slug, 'string');
        t.type(dataset.eventCount, 'number');
      }
    }
  });

  t.test('/datasets/{id}/schema/infer', async (t) => {
    const { status, body } = await getJson(
      app,
      `/api/v1/datasets/${fixture.datasetIds.exhibitions}/schema/infer`,
    );
    t.equal(status, 200);
    t.equal(body.dataset.slug, 'exhibitions');
    t.equal(body.totalEvents, expectedEvents(fixture, { datasets: ['exhibitions'] }).length);
    const startDate = body.fields.find((field: { path: string }) => field.path === 'data.startDate');
    t.same(startDate.types, ['date', 'string'], 'ISO dates and the odd free-text value');
    t.equal(startDate.declaredDate, true);
    const mag = body.fields.find((field: { path: string }) => field.path === 'data.mag');
    t.same(mag.types, ['number']);
    const missing = await getJson(app, '/api/v1/datasets/999999/schema/infer');
    t.equal(missing.status, 404);
    t.equal(missing.body.error, 'Not Found');
  });

  t.test('counts follow deletes and updates made by any writer', async (t) => {
    await db.pool.query(sql.unsafe`delete from events where (data->>'seq')::int % 7 = 3`);
    await db.pool.query(sql.unsafe`
      update events set event_timestamp = event_timestamp - interval '40 days',
                        location = st_translate(location, 1, 0.5)
      where (data->>'seq')::int % 11 = 4 and location is not null`);
    const truth = (await db.pool.oneFirst(sql.unsafe`select count(*)::int as count from events`)) as number;
    const stats = await getJson(app, '/api/v1/sources/stats');
    t.equal(stats.body.totalEvents, truth);
    const inEurope = (await db.pool.oneFirst(sql.unsafe`
      select count(*)::int from events
      where location && st_makeenvelope(-5, 40, 20, 60, 4326)
        and event_timestamp >= '2023-03-17T13:45:00Z' and event_timestamp < '2024-02-09T08:00:00.001Z'`)) as number;
    const list = await getJson(app, '/api/v1/events', {
      bounds: { north: 60, south: 40, east: 20, west: -5 },
      startDate: '2023-03-17T13:45:00Z',
      endDate: '2024-02-09T08:00:00Z',
    });
    t.equal(list.body.pagination.totalDocs, inEurope);
    const temporal = await getJson(app, '/api/v1/events/temporal');
    t.equal(temporal.body.metadata.total, truth);
    const newsTruth = (await db.pool.oneFirst(sql.unsafe`
      select count(*)::int from events where catalog_id = ${fixture.catalogIds.news ?? 0}`)) as number;
    const news = await getJson(app, '/api/v1/events', { catalog: 'news', limit: '1' });
    t.equal(news.body.pagination.totalDocs, newsTruth, 'the per-catalog totals follow too');
    const newsMap = await getJson(app, '/api/v1/events/geo', {
      catalog: 'news',
      bounds: WORLD_BOUNDS,
      zoom: '3',
    });
    const located = (await db.pool.oneFirst(sql.unsafe`
      select count(*)::int from events where catalog_id = ${fixture.catalogIds.news ?? 0} and location is not null`)) as number;
    t.equal(
      newsMap.body.features.reduce(
        (sum: number, feature: { properties: { count?: number } }) => sum + (feature.properties.count ?? 1),
        0,
      ),
      located,
    );
  });
});

t.test('bad parameters: 400 with the spec error body naming the parameter', async (t) => {
  const { app } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const world = { north: 90, south: -90, east: 180, west: -180 };
  const cases: Array<[string, Params, string]> = [
    ['/api/v1/events', { bounds: '{"north": 5,' }, 'bounds'],
    ['/api/v1/events', { bounds: { north: 10, south: 20, east: 5, west: 0 } }, 'bounds'],
    ['/api/v1/events', { bounds: { north: 95, south: 20, east: 5, west: 0 } }, 'bounds'],
    ['/api/v1/events', { bounds: { north: 10, south: -91, east: 5, west: 0 } }, 'bounds'],
    ['/api/v1/events', { startDate: 'last tuesday' }, 'startDate'],
    ['/api/v1/events', { endDate: '2024-02-30' }, 'endDate'],
    ['/api/v1/events', { limit: '0' }, 'limit'],
    ['/api/v1/events', { limit: '1001' }, 'limit'],
    ['/api/v1/events', { page: '0' }, 'page'],
    ['/api/v1/events', { sort: 'secret' }, 'sort'],
    ['/api/v1/events', { dateField: 'createdAt' }, 'dateField'],
    ['/api/v1/events/geo', { bounds: world, zoom: '-1' }, 'zoom'],
    ['/api/v1/events/geo', { bounds: world, zoom: '30' }, 'zoom'],
    ['/api/v1/events/geo', { zoom: '3' }, 'bounds'],
    ['/api/v1/events/stats', { groupBy: 'country' }, 'groupBy'],
    ['/api/v1/events/stats', {}, 'groupBy'],
    ['/api/v1/events/temporal', { targetBuckets: '501' }, 'targetBuckets'],
    ['/api/v1/events/temporal', { minBuckets: '40', maxBuckets: '30' }, 'minBuckets'],
    ['/api/v1/events/temporal', { granularity: 'hour' }, 'granularity'],
    ['/api/v1/events/geo/stats', { zoom: '23' }, 'zoom'],
    ['/api/v1/events/bounds', { endDate: 'soon' }, 'endDate'],
  ];
  for (const [path, params, parameter] of cases) {
    const { status, body } = await getJson(app, path, params);
    const label = `${path} ${JSON.stringify(params)}`;
    t.equal(status, 400, label);
    t.equal(body.error, 'Bad Request', label);
    t.equal(body.code, 'INVALID_PARAMETER', label);
    t.match(`${body.message} ${body.details ?? ''}`, parameter, `${label} names ${parameter}`);
    t.same(
      Object.keys(body).filter((key) => !['error', 'message', 'details', 'code'].includes(key)),
      [],
      'nothing but the spec error fields',
    );
  }
  const typeError = await getJson(app, '/api/v1/events', { limit: 'many' });
  t.equal(typeError.status, 400);
  t.match(typeError.body.message, /limit/);
  const unknown = await getJson(app, '/api/v1/events', { colour: 'red' });
  t.equal(unknown.status, 400);
  t.match(unknown.body.message, /colour/);
});
