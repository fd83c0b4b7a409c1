import { type IncomingMessage, request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import type { Test } from 'tap';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { EXPORT_BATCH_SIZE } from '../../../src/adapters/postgres/read/export.ts';
import { MAX_CSV_DATA_COLUMNS } from '../../../src/adapters/postgres/read/export-columns.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { listenOnLoopback } from '../../helpers/http-client.ts';
import { runningStatements } from '../../helpers/running-statements.ts';
import { getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// GET /api/v1/events.geojson and /api/v1/events.csv (read/exports-routes.ts, postgres/read/export.ts):
// the same events as /events for the same filters, every filter, several batches stitched without a
// gap or a repeat, CSV byte-exact (RFC 4180, UTF-8, formula cells), gzip as a stream, bad parameters
// as 400, and a client that disconnects mid-export leaves no statement running.

async function setUp(t: Test) {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  return { app, db, fixture, client: await listenOnLoopback(app) };
}

t.test('GeoJSON: every event of the filter, as /events has them', async (t) => {
  const { app, client } = await setUp(t);
  const filters: Record<string, Record<string, string>> = {
    all: {},
    catalog: { catalog: 'news' },
    datasets: { datasets: 'protests,exhibitions', sort: 'id' },
    window: { startDate: '2024-03-01', endDate: '2024-09-30', sort: 'eventTimestamp' },
    bounds: { bounds: JSON.stringify({ north: 54.2, south: 50.9, east: 15.1, west: 11.8 }) },
    'custom date': { dateField: 'data.startDate', startDate: '2024-01-01', sort: '-dataset' },
  };
  for (const [name, filter] of Object.entries(filters)) {
    const response = await client.request(`/api/v1/events.geojson?${new URLSearchParams(filter)}`);
    t.equal(response.status, 200, name);
    t.equal(response.headers['content-type'], 'application/geo+json');
    const collection = JSON.parse(response.body.toString('utf8'));
    // The export's default sort is id (the table's order); /events is asked for the same order.
    const events = (await getJson(app, '/api/v1/events', { sort: 'id', ...filter, limit: '1000' })).body
      .events;
    t.equal(collection.type, 'FeatureCollection');
    t.same(
      collection.features.map((feature: { id: number }) => feature.id),
      events.map((event: { id: number }) => event.id),
      `${name}: the same events in the same order`,
    );
    for (const [index, feature] of collection.features.entries()) {
      const event = events[index];
      t.same(
        feature,
        {
          type: 'Feature',
          id: event.id,
          geometry: event.location
            ? { type: 'Point', coordinates: [event.location.longitude, event.location.latitude] }
            : null,
          properties: {
            title: event.title,
            eventTimestamp: event.eventTimestamp,
            dataset: feature.properties.dataset,
            catalog: event.dataset.catalog,
            data: event.data,
            provenance: event.provenance,
          },
        },
        `${name}: feature ${event.id}`,
      );
      if (index > 3) break;
    }
  }
});

t.test('CSV: RFC 4180, UTF-8 byte-exact, one column per data key, formula cells defused', async (t) => {
  const { db, fixture, client } = await setUp(t);
  const science = fixture.catalogIds.science ?? 0;
  const datasetId = Number(
    await db.pool.oneFirst(sql.unsafe`
      insert into datasets (catalog_id, slug, title, is_public) values (${science}, 'tricky', 'Tricky', true) returning id`),
  );
  const insert = async (data: unknown, location: [number, number] | null, at: string, title: string | null) =>
    Number(
      await db.pool.oneFirst(sql.unsafe`
        insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
        values (${datasetId}, ${science}, ${at}, ${title}, ${JSON.stringify(data)}::jsonb,
                ${location ? sql.unsafe`st_setsrid(st_makepoint(${location[0]}, ${location[1]}), 4326)` : null}, ${at})
        returning id`),
    );
  const first = await insert(
    {
      name: 'Zürich "Altstadt", Bahnhof',
      note: 'line1\nline2',
      formula: '=SUM(A1:A2)',
      n: -3.5,
      flag: true,
      nested: { a: [1, 'x'] },
      emoji: '東京 🎌',
    },
    [8.54, 47.37],
    '2024-05-01T10:00:00Z',
    'Jazz night, "live"',
  );
  const second = await insert(
    { name: 'plain', formula: '@cmd', minus: '-5', id: 'collides' },
    null,
    '2024-05-02T00:00:00Z',
    '=cmd',
  );
  const third = await insert(
    { list: ['a,b', 2], nul: null, plus: '+1', tab: '\tcmd', minus: '-' },
    [-0.5, -45.25],
    '2024-05-03T00:00:00Z',
    null,
  );
  // Stored by hand, not by an import: no job or row, and the times set here (provenance columns).
  await db.pool.query(sql.unsafe`
    update events set created_at = '2024-06-01T00:00:00Z', updated_at = '2024-06-02T00:00:00Z'
    where dataset_id = ${datasetId}`);
  const stored = ',,,2024-06-01T00:00:00.000Z,2024-06-02T00:00:00.000Z';
  const line = (fields: Array<string | number>) => `${fields.join(',')}\r\n`;
  const expected =
    line([
      'id,title,eventTimestamp,dataset,catalog,longitude,latitude,importJob,sourceRow,storedAt,changedAt',
      'emoji,flag,formula,data.id,list,minus,n,name,nested,note,nul,plus,tab',
    ]) +
    line([
      first,
      '"Jazz night, ""live"""',
      `2024-05-01T10:00:00.000Z,tricky,science,8.54,47.37${stored}`,
      "東京 🎌,true,'=SUM(A1:A2),,,,-3.5",
      '"Zürich ""Altstadt"", Bahnhof","{""a"": [1, ""x""]}","line1\nline2",,,',
    ]) +
    line([
      second,
      "'=cmd",
      `2024-05-02T00:00:00.000Z,tricky,science,,${stored}`,
      ",,'@cmd,collides,,'-5,,plain,,,,,",
    ]) +
    line([
      third,
      '',
      `2024-05-03T00:00:00.000Z,tricky,science,-0.5,-45.25${stored}`,
      `,,,,"[""a,b"", 2]",'-,,,,,,'+1,'\tcmd`,
    ]);
  const response = await client.request('/api/v1/events.csv?datasets=tricky');
  t.equal(response.status, 200);
  t.equal(response.headers['content-type'], 'text/csv; charset=utf-8; header=present');
  t.match(String(response.headers['content-disposition']), /attachment; filename="chronomap-events.csv"/);
  t.same(response.body, Buffer.from(expected, 'utf8'), 'byte for byte');
  t.equal(response.body.toString('utf8'), expected);

  const gzip = await client.request('/api/v1/events.csv?datasets=tricky', {
    headers: { 'accept-encoding': 'gzip' },
  });
  t.equal(gzip.headers['content-encoding'], 'gzip', 'a stream is compressed as a stream');
  t.same(gunzipSync(gzip.body), Buffer.from(expected, 'utf8'));
});

t.test('batches are stitched without a gap or a repeat', async (t) => {
  const { db, fixture, client } = await setUp(t);
  const count = EXPORT_BATCH_SIZE * 2 + 17;
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select ${fixture.datasetIds.fires ?? 0}, ${fixture.catalogIds.news ?? 0}, 'bulk-' || i, 'bulk',
           jsonb_build_object('i', i), st_setsrid(st_makepoint(i % 360 - 180, (i % 170) - 85), 4326),
           timestamptz '2020-01-01' + (i % 1000) * interval '1 hour'
    from generate_series(1, ${count}) i`);
  const expectedTotal = Number(
    await db.pool.oneFirst(
      sql.unsafe`select count(*) from events where dataset_id = ${fixture.datasetIds.fires ?? 0}`,
    ),
  );
  for (const sort of ['-eventTimestamp', 'id', '-dataset', 'isValid']) {
    const response = await client.request(`/api/v1/events.geojson?datasets=fires&sort=${sort}`);
    const ids = JSON.parse(response.body.toString('utf8')).features.map((f: { id: number }) => f.id);
    t.equal(ids.length, expectedTotal, `${sort}: every event`);
    t.equal(new Set(ids).size, ids.length, `${sort}: none twice`);
  }
  const csv = (await client.request('/api/v1/events.csv?datasets=fires')).body.toString('utf8');
  t.equal(csv.split('\r\n').length - 2, expectedTotal, 'CSV: a line per event after the header');
});

t.test('bad parameters are 400s with the error body', async (t) => {
  const { client } = await setUp(t);
  for (const query of ['sort=data.value', 'startDate=yesterday', 'limit=5', 'bounds=nope', 'sort=title']) {
    const response = await client.request(`/api/v1/events.csv?${query}`);
    t.equal(response.status, 400, query);
    t.match(JSON.parse(response.body.toString('utf8')), { error: 'Bad Request' }, query);
  }
});

t.test('a CSV of more data keys than MAX_CSV_DATA_COLUMNS is a 400 that says what to do', async (t) => {
  const { db, fixture, client } = await setUp(t);
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
    select ${fixture.datasetIds.fires ?? 0}, ${fixture.catalogIds.news ?? 0}, 'wide-' || i, 'wide',
           jsonb_build_object('key_' || i, i), timestamptz '2020-01-01'
    from generate_series(1, ${MAX_CSV_DATA_COLUMNS}) i`);
  const csv = await client.request('/api/v1/events.csv?datasets=fires');
  t.equal(csv.status, 400);
  t.match(JSON.parse(csv.body.toString('utf8')), {
    error: 'Bad Request',
    message:
      /more different data keys than the 1000 columns a CSV export holds; narrow the datasets or export GeoJSON/,
  });
  t.equal(
    (await client.request('/api/v1/events.csv?datasets=protests')).status,
    200,
    'another dataset still exports',
  );
  t.equal(
    (await client.request('/api/v1/events.geojson?datasets=fires')).status,
    200,
    'and GeoJSON has no such limit',
  );
});

t.test('a client that disconnects mid-export leaves no statement running', async (t) => {
  const { db, fixture, client } = await setUp(t);
  // Five ranges and a bit, 10 MB each. While the client does not read, the loopback socket's buffers
  // take about one range, the export holds the one being written and the two read ahead, and waits;
  // the next range's statement starts only when the client reads again.
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
    select ${fixture.datasetIds.fires ?? 0}, ${fixture.catalogIds.news ?? 0}, 'bulk-' || i, 'bulk',
           jsonb_build_object('pad', repeat('x', 2000)), timestamptz '2020-01-01' + i * interval '1 minute'
    from generate_series(1, ${EXPORT_BATCH_SIZE * 5 + 100}) i`);
  const { running, waitFor } = runningStatements(db.pool, 'export_range');
  // While this client does not read, the datasets table is locked; then it reads, so the next
  // range's statement (which joins datasets) starts and waits for the lock, running, until the
  // cancel ends it.
  const url = new URL(client.base);
  const locker = await db.pool.connect(async (connection) => {
    const outgoing = request({
      host: url.hostname,
      port: url.port,
      path: '/api/v1/events.csv?datasets=fires',
    });
    outgoing.on('error', () => {});
    outgoing.end();
    const response = await new Promise<IncomingMessage>((resolve) => outgoing.on('response', resolve));
    t.equal(response.statusCode, 200);
    response.pause();
    response.on('error', () => {});
    await new Promise((resolve) => setTimeout(resolve, 500)); // the export fills its buffers
    await connection.query(sql.unsafe`begin`);
    await connection.query(sql.unsafe`lock table datasets in access exclusive mode`);
    response.on('data', () => {});
    response.resume();
    t.ok(await waitFor((n) => n > 0), 'the next batch runs (waiting for the lock)');
    outgoing.destroy();
    const ended = await waitFor((n) => n === 0);
    await connection.query(sql.unsafe`rollback`);
    return ended;
  });
  t.ok(locker, 'no statement is left running once the client is gone');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(await running(), 0, 'and no batch starts after it');
});
