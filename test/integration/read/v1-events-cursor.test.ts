import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { getJson, loadReadFixture, type Params } from '../../helpers/v1-fixture.ts';

// Keyset (cursor) paging of GET /api/v1/events (src/domain/read/event-cursor.ts): walking nextCursor gives
// exactly the events of one big page in the same order, for every sort it offers, with every answer
// path (no filter, a catalog, bounds, a small box); inserts and deletes meanwhile neither repeat nor
// skip an event; a bad cursor is a 400 naming it.

const BERLIN = { north: 54.2, south: 50.9, east: 15.1, west: 11.8 };
const SMALL_BOX = { north: 52.85, south: 52.18, east: 14.28, west: 12.52 };

t.test('walking nextCursor gives every event once, in order', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadReadFixture(db.pool);

  async function walk(params: Params, limit: number): Promise<number[]> {
    const ids: number[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 1000; guard += 1) {
      const { status, body } = await getJson(app, '/api/v1/events', {
        ...params,
        limit: String(limit),
        ...(cursor ? { cursor } : {}),
      });
      if (status !== 200) throw new Error(`${status} ${JSON.stringify(body)}`);
      ids.push(...body.events.map((event: { id: number }) => event.id));
      cursor = body.nextCursor;
      if (cursor === null) return ids;
    }
    throw new Error('no end');
  }

  for (const sort of ['-eventTimestamp', 'eventTimestamp', 'id', '-id', 'dataset', '-isValid']) {
    for (const [name, filter] of Object.entries({
      all: {},
      catalog: { catalog: 'news' },
      bounds: { bounds: BERLIN },
      'small box': { bounds: SMALL_BOX },
    } as Record<string, Params>)) {
      const whole = await getJson(app, '/api/v1/events', { ...filter, sort, limit: '1000' });
      const expected = whole.body.events.map((event: { id: number }) => event.id);
      t.ok(expected.length > 0, `${sort} ${name}: events`);
      t.same(await walk({ ...filter, sort }, 7), expected, `${sort} ${name}: same events, same order`);
    }
  }

  const first = await getJson(app, '/api/v1/events', { limit: '3' });
  t.type(first.body.nextCursor, 'string', 'a numbered page gives the cursor after it');
  const second = await getJson(app, '/api/v1/events', { limit: '3', cursor: first.body.nextCursor });
  const page2 = await getJson(app, '/api/v1/events', { limit: '3', page: '2' });
  t.same(second.body.events, page2.body.events, 'the cursor of page 1 gives page 2');
  t.match(second.body.pagination, { page: null, limit: 3, hasPrevPage: true, nextPage: null });
  t.equal(second.body.pagination.totalDocs, page2.body.pagination.totalDocs, 'the total as always');
});

t.test('inserts and deletes during a walk neither repeat nor skip an event', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  const original = (await getJson(app, '/api/v1/events', { catalog: 'news', limit: '1000' })).body.events.map(
    (event: { id: number }) => event.id,
  );
  const seen: number[] = [];
  let cursor: string | null = null;
  let round = 0;
  do {
    const { body } = await getJson(app, '/api/v1/events', {
      catalog: 'news',
      limit: '10',
      ...(cursor ? { cursor } : {}),
    });
    seen.push(...body.events.map((event: { id: number }) => event.id));
    cursor = body.nextCursor;
    round += 1;
    // Newer and older events than the page's, each time; an offset would shift by them.
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
      values (${fixture.datasetIds.protests ?? 0}, ${fixture.catalogIds.news ?? 0}, ${`new-${round}`}, 'new', '{}', now() + interval '1 day'),
             (${fixture.datasetIds.protests ?? 0}, ${fixture.catalogIds.news ?? 0}, ${`old-${round}`}, 'old', '{}', '1990-01-01')`);
    // The last event shown is deleted: its position holds (the cursor carries its sort value).
    if (round === 2) await db.pool.query(sql.unsafe`delete from events where id = ${seen.at(-1) ?? 0}`);
  } while (cursor !== null && round < 500);
  const originalSeen = seen.filter((id) => original.includes(id));
  t.same(originalSeen, original, 'every event there at the start, once, in order');
  t.equal(new Set(seen).size, seen.length, 'no event twice');
});

t.test('a bad cursor is a 400 naming it', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadReadFixture(db.pool);
  const good = (await getJson(app, '/api/v1/events', { limit: '2' })).body.nextCursor as string;
  const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const cases: Record<string, Params> = {
    garbage: { cursor: 'not a cursor!' },
    'not JSON': { cursor: Buffer.from('{{').toString('base64url') },
    'wrong shape': { cursor: forged({ a: 1 }) },
    'bad id': { cursor: forged(['-eventTimestamp', '2024-01-01T00:00:00.000Z', -4]) },
    'bad value': { cursor: forged(['-eventTimestamp', "2024'; drop table events", 4]) },
    'another sort': { cursor: good, sort: 'id' },
    'a data sort': { cursor: good, sort: 'data.value' },
    'with page': { cursor: good, page: '2' },
    'too long': { cursor: 'a'.repeat(300) },
  };
  for (const [name, params] of Object.entries(cases)) {
    const { status, body } = await getJson(app, '/api/v1/events', params);
    t.equal(status, 400, `${name}: 400`);
    t.equal(body.code, 'INVALID_PARAMETER', name);
    t.match(body.details, /field: (cursor|page)/, `${name}: names the parameter`);
  }
});
