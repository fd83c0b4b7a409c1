import pg from 'pg';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { type PageCache, pageCache } from '../../../src/adapters/postgres/read/page-cache.ts';
import type { RawQuery } from '../../../src/domain/read/read-query.ts';
import type { Viewer } from '../../../src/ports/read/event-reader.ts';
import { readTextPage } from '../../helpers/event-pages.ts';
import { accountsApp, insertAccessFixture, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// The verified answer cache of /api/v1/events (src/adapters/postgres/read/page-cache.ts, migration 0240):
// a stored page is served only while nothing it read has changed, so every answer equals what the
// database gives at that moment, writes are seen by the next request, viewers never share pages,
// `Cache-Control: no-cache` bypasses it, and it holds at most its budget of bytes.

const ask = readTextPage;

const BERLIN = JSON.stringify({ north: 54.2, south: 50.9, east: 15.1, west: 11.8 });
const QUERIES: Record<string, RawQuery> = {
  'no filter': {},
  catalog: { catalog: 'news' },
  dataset: { datasets: 'protests' },
  'other dataset': { datasets: 'exhibitions' },
  'catalog and window': { catalog: 'news', startDate: '2024-03-01', endDate: '2025-02-10T12:00:00Z' },
  'bounds and dataset': { bounds: BERLIN, datasets: 'protests' },
  'bounds, total beside the page': { bounds: BERLIN, limit: '5' },
  // A city at zoom 10: page and total from one pass over the box's rows.
  'small box': { bounds: JSON.stringify({ north: 52.85, south: 52.18, east: 14.28, west: 12.52 }) },
};

t.test('a stored page is served while nothing it read changed, and never after', async (t) => {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  const cache = pageCache(db.pool, 4 * 1024 * 1024);
  const cached = postgresEventReader(db.pool, { pageCache: cache });
  const fresh = postgresEventReader(db.pool);

  /** Asks every query through the cache and checks it against the database; returns which hit. */
  async function check(when: string): Promise<Set<string>> {
    const hit = new Set<string>();
    for (const [name, query] of Object.entries(QUERIES)) {
      const before = cache.usage().hits;
      const answer = await ask(cached, query);
      if (cache.usage().hits > before) hit.add(name);
      t.same(answer, await ask(fresh, query), `${when}: ${name} as the database has it`);
    }
    return hit;
  }

  t.same([...(await check('first'))], [], 'nothing stored at first');
  t.same([...(await check('again'))].sort(), Object.keys(QUERIES).sort(), 'every page asked again is a hit');
  t.equal(cache.usage().entries, Object.keys(QUERIES).length, 'one entry per page');

  // An insert into one dataset: its pages are read again, the others' stay.
  const protests = fixture.datasetIds.protests ?? 0;
  const news = fixture.catalogIds.news ?? 0;
  const totalBefore = (await ask(cached, QUERIES.dataset ?? {})).totalDocs;
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    values (${protests}, ${news}, 'cache-test-1', 'new in Berlin', '{"v": 1}',
            st_setsrid(st_makepoint(13.4, 52.5), 4326), '2025-01-05T10:00:00Z')`);
  const afterInsert = await check('after an insert into protests');
  t.same(
    [...afterInsert].sort(),
    ['other dataset'],
    'only the page of the untouched dataset is served from the cache',
  );
  t.equal((await ask(cached, QUERIES.dataset ?? {})).totalDocs, totalBefore + 1, 'the new event is counted');

  // An update of an event's data, then a delete: each seen by the very next request.
  await check('stored again');
  await db.pool.query(sql.unsafe`update events set data = '{"v": 2}' where unique_id = 'cache-test-1'`);
  t.same(
    [...(await check('after an update'))].sort(),
    ['other dataset'],
    'an update invalidates like an insert',
  );
  // The same page in other words (the default sort and limit spelled out): the same entry.
  const hits = cache.usage().hits;
  const updated = await ask(cached, { datasets: 'protests', sort: '-eventTimestamp', limit: '100' });
  t.equal(cache.usage().hits, hits + 1, 'the normalised request finds the entry');
  t.match(updated.eventsJson, /"v":\s*2/, 'the updated data is served');
  t.notMatch(updated.eventsJson, /"v":\s*1\b/, 'not the data before the update');
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'cache-test-1'`);
  t.same(
    [...(await check('after a delete'))].sort(),
    ['other dataset'],
    'a delete invalidates like an insert',
  );
  t.equal((await ask(cached, QUERIES.dataset ?? {})).totalDocs, totalBefore, 'the deleted event is gone');

  // A dataset's title is in every event of the answer: a change to datasets invalidates everything.
  await check('stored once more');
  await db.pool.query(sql.unsafe`update datasets set title = 'Renamed protests' where id = ${protests}`);
  t.same([...(await check('after a dataset change'))], [], 'no page is served across a dataset change');
  t.match((await ask(cached, QUERIES.dataset ?? {})).eventsJson, /Renamed protests/, 'the new title');

  // In a transaction that has not committed, the pages stay as they were; after it, they do not.
  await check('stored before a transaction');
  const writer = new pg.Client({ connectionString: db.url });
  await writer.connect();
  t.teardown(() => writer.end());
  await writer.query('begin');
  await writer.query('delete from events where dataset_id = $1', [protests]);
  t.same(
    (await ask(cached, QUERIES.dataset ?? {})).totalDocs,
    totalBefore,
    'uncommitted deletes are not seen (from the cache or not)',
  );
  await writer.query('commit');
  t.equal((await ask(cached, QUERIES.dataset ?? {})).totalDocs, 0, 'committed, they are seen at once');

  await db.pool.query(sql.unsafe`truncate events`);
  await check('after truncate');
  t.equal((await ask(cached, {})).totalDocs, 0, 'truncate is seen');
});

t.test('unfiltered pages of an admin (every dataset, no scope row) see writes to any dataset', async (t) => {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  const cache = pageCache(db.pool, 4 * 1024 * 1024);
  const cached = postgresEventReader(db.pool, { pageCache: cache });
  const admin: Viewer = { id: 1, email: 'admin@example.org', role: 'admin', trustLevel: 5 };
  const before = await ask(cached, {}, admin);
  t.equal((await ask(cached, {}, admin)).totalDocs, before.totalDocs);
  t.equal(cache.usage().hits, 1, 'asked again, the page is a hit');
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, event_timestamp)
    values (${fixture.datasetIds.exhibitions ?? 0}, ${fixture.catalogIds.science ?? 0}, 'cache-admin-1',
            'newest', '2099-01-01T00:00:00Z')`);
  const after = await ask(cached, {}, admin);
  t.equal(after.totalDocs, before.totalDocs + 1, 'the insert is counted');
  t.match(after.eventsJson.slice(0, 300), /2099-01-01/, 'and listed first');
});

t.test('viewers never share stored pages', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const owner = await createUser({ trustLevel: 3 });
  const stranger = await createUser({ trustLevel: 3 });
  await insertAccessFixture(db, owner.id);
  const viewers = { anonymous: null, owner: await login(owner), stranger: await login(stranger) };
  const expected = { anonymous: 5, owner: 10, stranger: 5 };
  // Each viewer asks the same URLs twice, in turns, so that a page stored for one would be there
  // for the next.
  for (const round of [1, 2]) {
    for (const url of ['/api/v1/events', '/api/v1/events?datasets=my-data,open-data']) {
      for (const [who, token] of Object.entries(viewers)) {
        const response = await as(token)('GET', url);
        t.equal(response.statusCode, 200);
        t.equal(
          response.json().pagination.totalDocs,
          expected[who as keyof typeof expected],
          `round ${round}, ${url}: ${who} sees only what they may`,
        );
      }
    }
  }
});

t.test('Cache-Control: no-cache reads the database, through HTTP', async (t) => {
  const { app, db } = await testApp(t);
  await loadReadFixture(db.pool);
  const url = '/api/v1/events?catalog=news&limit=3';
  const get = async (headers: Record<string, string> = {}) =>
    (await app.inject({ method: 'GET', url, headers })).json();
  const stored = await get();
  t.same(await get(), stored, 'asked again, the same');
  // A write the cache cannot see (its version trigger off), to tell a stored answer from a fresh one;
  // with the trigger on, as deployed, there is no such write.
  await db.pool.query(sql.unsafe`alter table events disable trigger events_data_versions_update`);
  t.teardown(() =>
    db.pool.query(sql.unsafe`alter table events enable trigger events_data_versions_update`).then(() => {}),
  );
  await db.pool.query(
    sql.unsafe`update events set data = '{"changed": true}' where catalog_id = (select id from catalogs where slug = 'news')`,
  );
  t.same(await get(), stored, 'without the header: the stored answer (the write was hidden from it)');
  const fresh = await get({ 'cache-control': 'no-cache' });
  t.same(fresh.events[0].data, { changed: true }, 'with Cache-Control: no-cache: the database now');
  t.same(fresh.pagination, stored.pagination);
});

t.test('the cache holds at most its budget of bytes', async (t) => {
  const db = await testDatabase(t);
  await loadReadFixture(db.pool);
  const probe = pageCache(db.pool, 1024 * 1024);
  await ask(postgresEventReader(db.pool, { pageCache: probe }), { limit: '2' });
  const entry = probe.usage().bytes;
  t.ok(entry > 0, 'an entry has a size');

  const budget = Math.floor(entry * 3.5);
  const cache: PageCache = pageCache(db.pool, budget);
  const reader = postgresEventReader(db.pool, { pageCache: cache });
  for (let page = 1; page <= 12; page += 1) {
    await ask(reader, { limit: '2', page: String(page) });
    t.ok(cache.usage().bytes <= budget, `page ${page}: within the budget`);
  }
  t.ok(cache.usage().entries <= 3, 'the oldest entries went');
  const hits = cache.usage().hits;
  await ask(reader, { limit: '2', page: '12' });
  t.equal(cache.usage().hits, hits + 1, 'the most recent page is still there');
  await ask(reader, { limit: '2', page: '1' });
  t.equal(cache.usage().hits, hits + 1, 'the first one is not');

  const tiny = pageCache(db.pool, Math.floor(entry / 2));
  await ask(postgresEventReader(db.pool, { pageCache: tiny }), { limit: '2' });
  t.same(tiny.usage().entries, 0, 'an answer larger than the whole budget is not stored');
});
