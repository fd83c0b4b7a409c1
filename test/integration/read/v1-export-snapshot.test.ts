import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import type { Test } from 'tap';
import t from 'tap';
import { DEFAULT_BUDGETS } from '../../../src/adapters/config/budget-config.ts';
import { type DatabasePool, sql } from '../../../src/adapters/postgres/database.ts';
import { EXPORT_BATCH_SIZE } from '../../../src/adapters/postgres/read/export.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';

// Issue 30 §4: no download ends as a truncated 200. Over a real socket, with the read pool's
// statement budget cut to STATEMENT_BUDGET_MS:
// - an export of many ranges whose client stops reading for three budgets (so the export as a
//   whole outlasts any one statement's budget) while events are inserted, deleted and changed, is
//   complete and holds exactly the events as they were when it started;
// - an export whose database side fails after the answer started (its snapshot's holder ended)
//   is broken off: the client sees the transfer end abnormally (no last chunk, no end of the
//   gzip stream), never a complete-looking file.
// No timed assertions: the waits only make the export last longer than the budget.

const STATEMENT_BUDGET_MS = 500;

async function setUp(t: Test) {
  const { app, db } = await testApp(t, {
    config: {
      quotasFile: policyFile(t, unlimitedAnonymousReads),
      budgets: { ...DEFAULT_BUDGETS, readStatementTimeoutMs: STATEMENT_BUDGET_MS },
    },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  return { db, port };
}

/** `count` events of one public dataset, each with about `padding` bytes of data. */
async function insertEvents(pool: DatabasePool, count: number, padding: number): Promise<void> {
  await pool.query(sql.unsafe`
    with c as (insert into catalogs (slug, title, is_public) values ('bulk', 'Bulk', true) returning id),
    d as (insert into datasets (catalog_id, slug, title, is_public) select id, 'bulk', 'Bulk', true
          from c returning id, catalog_id)
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, 'bulk-' || n, 'bulk ' || n,
           jsonb_build_object('n', n, 'pad', (select coalesce(string_agg(md5(n::text || '.' || j), ''), '')
                                              from generate_series(1, ${Math.ceil(padding / 32)}) j)),
           st_setsrid(st_makepoint(n % 360 - 180, n % 170 - 85), 4326),
           timestamptz '2020-01-01' + n * interval '1 minute'
    from d cross join generate_series(1, ${count}) n`);
}

type Download = {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Resolves once the body has ended, or was broken off. */
  body: Promise<{ bytes: Buffer; complete: boolean }>;
  pause(): void;
  resume(): void;
};

/** A GET whose body is not read until `resume` (the export waits for it: backpressure). */
function download(port: number, path: string, headers: http.OutgoingHttpHeaders = {}): Promise<Download> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, headers }, (response) => {
      response.pause();
      const chunks: Buffer[] = [];
      const body = new Promise<{ bytes: Buffer; complete: boolean }>((done) => {
        const finish = (complete: boolean) => done({ bytes: Buffer.concat(chunks), complete });
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => finish(response.complete));
        // A transfer broken off by the server: 'aborted' / an error, then 'close' without 'end'.
        response.on('error', () => {});
        response.on('close', () => {
          if (!response.readableEnded) finish(false);
        });
      });
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        body,
        pause: () => response.pause(),
        resume: () => response.resume(),
      });
    });
    request.on('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Ends the database session holding an export's snapshot (postgres/read/export.ts, holdSnapshot). */
async function endSnapshotHolders(pool: DatabasePool): Promise<number> {
  const ended = await pool.any(sql.unsafe`
    select pg_terminate_backend(pid) from pg_stat_activity
    where datname = current_database() and state = 'idle in transaction' and query like '%pg_export_snapshot%'`);
  return ended.length;
}

t.test(
  'an export outlasting the statement budget is one snapshot, whatever is written meanwhile',
  async (t) => {
    const { db, port } = await setUp(t);
    // Twelve ranges and a bit.
    await insertEvents(db.pool, EXPORT_BATCH_SIZE * 12 + 321, 0);
    const ids = async () =>
      (await db.pool.anyFirst(sql.unsafe`select id from events order by id`)).map((id) => Number(id));
    const titleOf = async (id: number) =>
      String(await db.pool.oneFirst(sql.unsafe`select title from events where id = ${id}`));

    for (const encoding of ['identity', 'gzip']) {
      const before = await ids();
      const last = before.slice(-10);
      const changed = before.at(-20) ?? 0;
      const oldTitle = await titleOf(changed);
      const started = await download(port, '/api/v1/events.geojson', { 'accept-encoding': encoding });
      t.equal(started.status, 200, `${encoding}: the export started`);
      // The answer has started, so the export's snapshot is taken: what follows is not in it.
      await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
      select dataset_id, catalog_id, unique_id || '-late-' || ${encoding}, 'late', '{}', now() from events
      where id = any(${sql.array(before.slice(0, 100), 'int8')})`);
      await db.pool.query(sql.unsafe`delete from events where id = any(${sql.array(last, 'int8')})`);
      await db.pool.query(sql.unsafe`update events set title = 'changed' where id = ${changed}`);
      // The client takes nothing for three statement budgets: the export lasts longer than any one
      // of its statements may.
      await sleep(3 * STATEMENT_BUDGET_MS);
      started.resume();
      const { bytes, complete } = await started.body;
      t.ok(complete, `${encoding}: the transfer ended normally`);
      const text = (encoding === 'gzip' ? gunzipSync(bytes) : bytes).toString('utf8');
      const collection = JSON.parse(text) as {
        features: Array<{ id: number; properties: { title: string } }>;
      };
      t.same(
        collection.features.map((feature) => feature.id),
        before,
        `${encoding}: exactly the events as they were when the export started`,
      );
      t.equal(
        collection.features.find((feature) => feature.id === changed)?.properties.title,
        oldTitle,
        `${encoding}: with the values they had`,
      );
      t.equal((await ids()).length, before.length + 100 - 10, 'while the database changed');
      t.equal(await titleOf(changed), 'changed');
    }
    t.equal(await endSnapshotHolders(db.pool), 0, 'no snapshot is held once the exports have ended');
  },
);

t.test('an export that fails after its answer started is broken off, not a short file', async (t) => {
  const { db, port } = await setUp(t);
  // Six ranges of about 10 MB: while the client does not read, the socket's buffers, the range being
  // written and the two read ahead hold about half of them; the rest is read after the failure.
  await insertEvents(db.pool, EXPORT_BATCH_SIZE * 6, 2000);
  for (const [format, encoding] of [
    ['geojson', 'identity'],
    ['csv', 'identity'],
    ['geojson', 'gzip'],
  ] as const) {
    const started = await download(port, `/api/v1/events.${format}`, { 'accept-encoding': encoding });
    t.equal(started.status, 200, `${format}, ${encoding}: the export started`);
    await sleep(500); // the export fills what it may hold while the client does not read
    t.equal(await endSnapshotHolders(db.pool), 1, 'the snapshot is gone (as when the database ends it)');
    started.resume();
    const { bytes, complete } = await started.body;
    t.notOk(complete, `${format}, ${encoding}: the client sees a broken transfer`);
    t.ok(bytes.length > 0, 'after part of the body');
    if (encoding === 'gzip')
      t.throws(() => gunzipSync(bytes), { code: 'Z_BUF_ERROR' }, 'the gzip stream has no end');
    else if (format === 'geojson')
      t.throws(() => JSON.parse(bytes.toString('utf8')), SyntaxError, 'not a whole document');
  }
});
