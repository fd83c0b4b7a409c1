import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { testApp } from '../../helpers/app.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { expectedEvents, getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// A box covering most of the world is counted as everything less what lies outside it (parts.ts,
// worldParts): the unlocated, the bands beyond its latitudes and the strips beside it. An event
// exactly on the box's west or east edge is inside the box (`between` is inclusive) and must not be
// taken away with a strip; one a hair beyond is.

const MOST = { north: 80, south: -70, east: 170, west: -170 };
const ACROSS = { north: 85, south: -85, east: 100, west: 120 };

t.test('most-of-the-world boxes: events on and just beyond their edges', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  const dataset = fixture.datasetIds.protests ?? 0;
  const catalog = fixture.catalogIds.news ?? 0;
  const spots: Array<[number, number]> = [
    [170, 10],
    [-170, 10],
    [170.000001, 10],
    [-170.000001, 10],
    [100, 10],
    [120, 10],
    [100.000001, 10],
    [119.999999, 10],
  ];
  const Inserted = row(Type.Object({ id: Type.Number(), event_timestamp: Type.String() }));
  for (const [index, [longitude, latitude]] of spots.entries()) {
    const inserted = await db.pool.one(sql.type(Inserted)`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      values (${dataset}, ${catalog}, ${`edge-${index}`}, ${`edge ${index}`}, '{}'::jsonb,
              st_setsrid(st_makepoint(${longitude}, ${latitude}), 4326), timestamptz '2024-03-15T12:00:00Z')
      returning id, to_char(event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as event_timestamp`);
    fixture.events.push({
      id: inserted.id,
      datasetSlug: 'protests',
      catalogSlug: 'news',
      title: `edge ${index}`,
      longitude,
      latitude,
      eventTimestamp: inserted.event_timestamp,
      data: {},
    });
  }

  for (const bounds of [MOST, ACROSS]) {
    const scopes: Array<{
      query: Record<string, string>;
      expected: { catalog?: string; datasets?: string[] };
    }> = [
      { query: {}, expected: {} },
      { query: { catalog: 'news' }, expected: { catalog: 'news' } },
      { query: { datasets: 'protests' }, expected: { datasets: ['protests'] } },
    ];
    for (const scope of scopes) {
      const label = `${JSON.stringify(bounds)} ${JSON.stringify(scope.query)}`;
      const expected = expectedEvents(fixture, { bounds, ...scope.expected });
      const list = await getJson(app, '/api/v1/events', { bounds, ...scope.query, limit: '1' });
      t.equal(list.body.pagination.totalDocs, expected.length, `${label}: /events totalDocs`);
      const temporal = await getJson(app, '/api/v1/events/temporal', {
        bounds,
        ...scope.query,
        granularity: 'month',
      });
      t.equal(temporal.status, 200, `${label}: /events/temporal`);
      const march = temporal.body.histogram.find((bucket: { date: string }) =>
        bucket.date.startsWith('2024-03'),
      );
      t.equal(
        march?.count ?? 0,
        expected.filter((event) => event.eventTimestamp.startsWith('2024-03')).length,
        `${label}: the month of the edge events`,
      );
    }
  }
});
