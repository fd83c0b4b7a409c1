import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { testApp } from '../../helpers/app.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { expectedEvents, getJson, loadReadFixture, SAME_SPOT } from '../../helpers/v1-fixture.ts';

// The level-10 cell counts per UTC day (migrations/0235), which answer the whole days at the ends
// of a date range and the months a histogram bin boundary cuts, for unfiltered views with bounds:
// kept exact by the triggers through inserts, updates (in time and in space) and deletes, and
// answers through them agree with the events after each change. A catalog's or datasets' view has
// no day cells: its histogram in a box comes from the rows, checked the same way.

const EUROPE = { north: 60, south: 40, east: 20, west: -5 };

t.test('day cell counts', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  const protests = fixture.datasetIds.protests ?? 0;
  const news = fixture.catalogIds.news ?? 0;

  const DayRow = row(
    Type.Object({
      x: Type.Number(),
      y: Type.Number(),
      day: Type.String(),
      count: Type.Number(),
      lon: Type.Number(),
      lat: Type.Number(),
    }),
  );
  async function sameAsRecount(t: Test, when: string): Promise<void> {
    const kept = await db.pool.any(sql.type(DayRow)`
      select cell_x as x, cell_y as y, day::text as day, event_count::int8 as count, sum_lon as lon, sum_lat as lat
      from event_cell_day_counts order by 1, 2, 3`);
    const recount = await db.pool.any(sql.type(DayRow)`
      select grid_x >> 14 as x, grid_y >> 14 as y, date_trunc('day', event_timestamp, 'UTC')::text as day,
             count(*)::int8 as count, sum(st_x(location)) as lon, sum(st_y(location)) as lat
      from events where location is not null group by 1, 2, 3 order by 1, 2, 3`);
    t.same(
      kept.map((r) => [r.x, r.y, r.day, r.count]),
      recount.map((r) => [r.x, r.y, r.day, r.count]),
      `${when}: one row per occupied cell and day, with its count`,
    );
    const sums = kept.every((r, i) => {
      const other = recount[i];
      return other !== undefined && Math.abs(r.lon - other.lon) < 1e-6 && Math.abs(r.lat - other.lat) < 1e-6;
    });
    t.ok(sums, `${when}: the coordinate sums`);
  }

  // The histogram and map of an unfiltered box with a window cutting days and months, against the
  // fixture as it is now in the database.
  async function answersAgree(t: Test, when: string): Promise<void> {
    const window = { startDate: '2023-02-10T10:00:00Z', endDate: '2024-07-20T18:30:00Z' };
    const events = expectedEvents(fixture, {
      bounds: EUROPE,
      from: window.startDate,
      to: '2024-07-20T18:30:00.001Z',
    });
    const list = await getJson(app, '/api/v1/events', { bounds: EUROPE, ...window, limit: '1' });
    t.equal(list.body.pagination.totalDocs, events.length, `${when}: /events totalDocs`);
    for (const zoom of [2, 4, 6, 8]) {
      const geo = await getJson(app, '/api/v1/events/geo', { bounds: EUROPE, ...window, zoom: String(zoom) });
      const sum = geo.body.features.reduce(
        (acc: number, feature: { properties: { count?: number } }) => acc + (feature.properties.count ?? 1),
        0,
      );
      t.equal(sum, events.length, `${when}: zoom ${zoom} features`);
    }
    // A catalog's and a dataset's map read their whole months as listed periods of event_cell_counts
    // (parts.ts, periodConditions): the catalog's rows and the dataset's, not the totals.
    const scopes: Array<{
      expected: { catalog?: string; datasets?: string[] };
      query: Record<string, string>;
    }> = [
      { expected: { catalog: 'news' }, query: { catalog: 'news' } },
      { expected: { datasets: ['protests'] }, query: { datasets: 'protests' } },
    ];
    for (const scope of scopes) {
      const expected = expectedEvents(fixture, {
        bounds: EUROPE,
        from: window.startDate,
        to: '2024-07-20T18:30:00.001Z',
        ...scope.expected,
      });
      const geo = await getJson(app, '/api/v1/events/geo', {
        bounds: EUROPE,
        ...window,
        ...scope.query,
        zoom: '4',
      });
      const sum = geo.body.features.reduce(
        (acc: number, feature: { properties: { count?: number } }) => acc + (feature.properties.count ?? 1),
        0,
      );
      t.equal(sum, expected.length, `${when}: zoom 4 features of ${JSON.stringify(scope.query)}`);
      // Bins of about 26 days, which cut most months.
      const histogram = await getJson(app, '/api/v1/events/temporal', {
        bounds: EUROPE,
        ...window,
        ...scope.query,
        targetBuckets: '20',
      });
      t.same(
        histogram.body.histogram.map((bucket: { count: number }) => bucket.count),
        bucketCounts(histogram.body.histogram, expected),
        `${when}: histogram of ${JSON.stringify(scope.query)} bucket by bucket`,
      );
    }
    const temporal = await getJson(app, '/api/v1/events/temporal', {
      bounds: EUROPE,
      ...window,
      targetBuckets: '40',
    });
    t.same(
      temporal.body.histogram.map((bucket: { count: number }) => bucket.count),
      bucketCounts(temporal.body.histogram, events),
      `${when}: histogram bucket by bucket`,
    );
  }

  function bucketCounts(
    histogram: Array<{ date: string; dateEnd: string }>,
    events: Array<{ eventTimestamp: string }>,
  ): number[] {
    return histogram.map((bucket) => {
      const from = Date.parse(bucket.date);
      const to = Date.parse(bucket.dateEnd);
      return events.filter((e) => Date.parse(e.eventTimestamp) >= from && Date.parse(e.eventTimestamp) < to)
        .length;
    });
  }

  const EventRow = row(
    Type.Object({
      id: Type.Number(),
      longitude: Type.Union([Type.Number(), Type.Null()]),
      latitude: Type.Union([Type.Number(), Type.Null()]),
      event_timestamp: Type.String(),
    }),
  );
  // Reload the fixture's view of the events after changing them in SQL.
  async function refresh(): Promise<void> {
    const rows = await db.pool.any(sql.type(EventRow)`
      select id, st_x(location) as longitude, st_y(location) as latitude,
             to_char(event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as event_timestamp
      from events`);
    const byId = new Map(rows.map((r) => [r.id, r]));
    fixture.events = fixture.events.flatMap((event) => {
      const stored = byId.get(event.id);
      return stored
        ? [
            {
              ...event,
              longitude: stored.longitude,
              latitude: stored.latitude,
              eventTimestamp: stored.event_timestamp,
            },
          ]
        : [];
    });
  }

  await sameAsRecount(t, 'after the fixture');
  await answersAgree(t, 'after the fixture');

  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select ${protests}, ${news}, 'day-extra-' || g, 'extra ' || g, '{}'::jsonb,
           st_setsrid(st_makepoint(${SAME_SPOT.longitude}, ${SAME_SPOT.latitude}), 4326),
           timestamptz '2024-07-01' + g * interval '7 hours'
    from generate_series(1, 8) g`);
  // One event moves in time, another in space (out of Europe), a third loses its location.
  await db.pool.query(sql.unsafe`
    update events set event_timestamp = event_timestamp + interval '40 days'
    where id = (select min(id) from events where location is not null and st_x(location) between 0 and 15)`);
  await db.pool.query(sql.unsafe`
    update events set location = st_setsrid(st_makepoint(-74, 40.7), 4326)
    where id = (select max(id) from events where location is not null and st_x(location) between 0 and 15
                and unique_id not like 'day-extra-%')`);
  await db.pool.query(sql.unsafe`
    update events set location = null
    where id = (select min(id) from events where location is not null and st_x(location) between 2 and 3)`);
  const Inserted = row(
    Type.Object({ id: Type.Number(), unique_id: Type.String(), title: Type.String(), data: Type.Unknown() }),
  );
  const inserted = await db.pool.any(
    sql.type(Inserted)`select id, unique_id, title, data from events where unique_id like 'day-extra-%'`,
  );
  for (const extra of inserted) {
    fixture.events.push({
      id: extra.id,
      datasetSlug: 'protests',
      catalogSlug: 'news',
      title: extra.title,
      longitude: SAME_SPOT.longitude,
      latitude: SAME_SPOT.latitude,
      eventTimestamp: '',
      data: {},
    });
  }
  await refresh();
  await sameAsRecount(t, 'after inserts and updates');
  await answersAgree(t, 'after inserts and updates');

  await db.pool.query(
    sql.unsafe`delete from events where unique_id like 'day-extra-%' and title <> 'extra 1'`,
  );
  await db.pool.query(sql.unsafe`
    delete from events where id in (select id from events where location is not null order by id limit 25)`);
  await refresh();
  await sameAsRecount(t, 'after deletes');
  await answersAgree(t, 'after deletes');

  await db.pool.query(sql.unsafe`truncate events cascade`);
  t.equal(
    await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int8 as n from event_cell_day_counts`),
    0,
    'truncating events empties the counts',
  );
});
