import { AsyncLocalStorage } from 'node:async_hooks';
import type { Test } from 'tap';
import t from 'tap';
import { type DatabasePool, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventExporter } from '../../../src/adapters/postgres/read/export.ts';
import { parseEventFilter, type RawQuery } from '../../../src/domain/read/read-query.ts';
import { parseEventSort } from '../../../src/domain/read/sort.ts';
import type { EventExporter, ExportFormat } from '../../../src/ports/read/event-exporter.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// The export's ranges (postgres/read/export.ts) with tiny sizes, against the read fixture:
// ranges found several at a time and read two at once still give every event once, in the sort's
// order; the export is one snapshot (what is written, changed or deleted after it started is as it
// was); a range whose read runs out of the statement budget is read again in halves; snapshots are
// released however the export ends, and one more than the exporter holds is a 503; the CSV columns
// are the union of the exported datasets' keys, read again only for a dataset written since.

const SMALL = { reads: { batchSize: 7, boundsPerStatement: 3, smallestRange: 2 } };

async function exported(exporter: EventExporter, query: RawQuery, format: ExportFormat): Promise<string> {
  const text = await exporter.exportEvents(
    null,
    parseEventFilter(query),
    parseEventSort(query.sort ?? 'id'),
    format,
  );
  const parts = [text.head];
  let first = true;
  for await (const chunk of text.batches) {
    if (!first) parts.push(text.separator);
    parts.push(chunk);
    first = false;
  }
  parts.push(text.tail);
  return parts.join('');
}

async function exportedIds(exporter: EventExporter, query: RawQuery): Promise<number[]> {
  const body = JSON.parse(await exported(exporter, query, 'geojson')) as { features: Array<{ id: number }> };
  return body.features.map((feature) => feature.id);
}

type Fragment = ReturnType<typeof sql.fragment>;

async function idsInOrder(pool: DatabasePool, where: Fragment, order: Fragment): Promise<number[]> {
  const rows = await pool.any(sql.unsafe`select id from events e where ${where} order by ${order}`);
  return rows.map((found) => Number((found as { id: unknown }).id));
}

const ALL = sql.fragment`true`;
const BY_TIME = sql.fragment`e.event_timestamp asc, e.id asc`;

/** The pool with every statement whose text contains `marker` counted, and `after` run once after the first. */
function watchedPool(pool: DatabasePool, marker: string, after?: () => Promise<void>) {
  const seen = { count: 0 };
  const watched = new Proxy(pool, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'one' && property !== 'any' && property !== 'transaction') return value;
      if (property === 'transaction')
        return (run: (connection: unknown) => Promise<unknown>) =>
          target.transaction((connection) => run(watch(connection)));
      return watch(target)[property as 'one'];
    },
  });
  function watch<T extends object>(target: T): T {
    return new Proxy(target, {
      get(inner, property, receiver) {
        const value: unknown = Reflect.get(inner, property, receiver);
        if (typeof value !== 'function' || (property !== 'one' && property !== 'any')) return value;
        return async (query: { sql: string }) => {
          const result = await value.call(inner, query);
          if (query.sql.includes(marker)) {
            seen.count += 1;
            if (seen.count === 1 && after) await after();
          }
          return result;
        };
      },
    });
  }
  return { pool: watched, seen };
}

async function setUp(t: Test) {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  return { db, fixture };
}

t.test('small ranges read two at a time give every event once, in order', async (t) => {
  const { db, fixture } = await setUp(t);
  const exporter = postgresEventExporter(db.pool, SMALL);
  const fires = fixture.datasetIds.fires ?? 0;
  const orders: Record<string, Fragment> = {
    id: sql.fragment`e.id asc`,
    '-id': sql.fragment`e.id desc`,
    eventTimestamp: BY_TIME,
    '-eventTimestamp': sql.fragment`e.event_timestamp desc, e.id desc`,
    dataset: sql.fragment`e.dataset_id asc, e.id asc`,
    '-isValid': sql.fragment`e.is_valid desc, e.id desc`,
  };
  for (const [sort, order] of Object.entries(orders)) {
    const all = await exportedIds(exporter, { sort });
    t.same(all, await idsInOrder(db.pool, ALL, order), `${sort}: every event in order`);
    const some = await exportedIds(exporter, {
      sort,
      datasets: 'fires',
      startDate: '2023-06-01',
      endDate: '2024-06-01',
    });
    t.same(
      some,
      await idsInOrder(
        db.pool,
        sql.fragment`e.dataset_id = ${fires} and e.event_timestamp >= '2023-06-01' and e.event_timestamp < '2024-06-01'`,
        order,
      ),
      `${sort}, filtered: every event in order`,
    );
    t.ok(
      some.length > SMALL.reads.batchSize * SMALL.reads.boundsPerStatement,
      `${sort}: more than one bounds statement`,
    );
  }
});

// Slonik refuses a statement on another connection inside a transaction's async context: the writes
// a hook makes during the export's statements run in the context of the test.
const outside = AsyncLocalStorage.snapshot();

t.test(
  'the export is one snapshot: what is written, changed or deleted after it started is as it was',
  async (t) => {
    const { db, fixture } = await setUp(t);
    const before = await idsInOrder(db.pool, ALL, BY_TIME);
    const [lowest, seventh] = await db.pool.any(sql.unsafe`
    select event_timestamp::text as at from events where id = any(${sql.array([before[0] ?? 0, before[6] ?? 0], 'int8')})
    order by event_timestamp`);
    const last = before.slice(-5);
    const changed = before.at(-10) ?? 0;
    const title = async (id: number) =>
      String(await db.pool.oneFirst(sql.unsafe`select title from events where id = ${id}`));
    const oldTitle = await title(changed);
    // Once the first bounds are known: 30 events land inside the first range, the last five (in later
    // ranges, not read yet) are deleted and another one's title changes.
    const { pool, seen } = watchedPool(db.pool, 'export_bounds', () =>
      outside(async () => {
        await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
      select ${fixture.datasetIds.fires ?? 0}, ${fixture.catalogIds.news ?? 0}, 'late-' || i, 'late', '{}',
             ${(lowest as { at: string }).at}::timestamptz
               + (${(seventh as { at: string }).at}::timestamptz - ${(lowest as { at: string }).at}::timestamptz) * i / 40
      from generate_series(1, 30) i`);
        await db.pool.query(sql.unsafe`delete from events where id = any(${sql.array(last, 'int8')})`);
        await db.pool.query(sql.unsafe`update events set title = 'changed' where id = ${changed}`);
      }),
    );
    const text = await exported(postgresEventExporter(pool, SMALL), { sort: 'eventTimestamp' }, 'geojson');
    const features = (JSON.parse(text) as { features: Array<{ id: number; properties: { title: string } }> })
      .features;
    const now = await idsInOrder(db.pool, ALL, BY_TIME);
    t.equal(now.length, before.length + 30 - 5, 'the events were written and deleted during the export');
    t.ok(seen.count > 1, 'after the first of several bounds statements');
    t.same(
      features.map((feature) => feature.id),
      before,
      'the export has the events as they were when it started, once each, in order',
    );
    t.equal(await title(changed), 'changed');
    t.equal(
      features.find((feature) => feature.id === changed)?.properties.title,
      oldTitle,
      'with their old values',
    );
  },
);

/**
 * The pool, with a real statement timeout for every range read that returns more than `maxRows`
 * events: the read runs, then its transaction sleeps past a short statement_timeout, so PostgreSQL
 * cancels it and the driver reports a StatementTimeoutError, as for a range that was too slow.
 */
function slowRanges(pool: DatabasePool, maxRows: number) {
  const reads: number[] = [];
  const connectionOf = <T extends object>(connection: T): T =>
    new Proxy(connection, {
      get(inner, property, receiver) {
        const value: unknown = Reflect.get(inner, property, receiver);
        if (property !== 'any' || typeof value !== 'function') return value;
        return async (query: { sql: string }) => {
          const rows = (await value.call(inner, query)) as Array<{ chunk?: string }>;
          if (!query.sql.includes('export_range')) return rows;
          const events = rows.reduce(
            (sum, found) => sum + (found.chunk?.split('"type":"Feature"').length ?? 1) - 1,
            0,
          );
          reads.push(events);
          if (events > maxRows) {
            const query = (connection as unknown as { query: (q: unknown) => Promise<unknown> }).query;
            // 250 ms, not less: the new timeout is armed while the SET's own protocol messages are
            // still being processed, and one that fires there is reported by PostgreSQL as a cancel
            // "due to user request", not as a statement timeout (seen at 10 ms on a loaded CI run).
            await query.call(connection, sql.unsafe`set local statement_timeout = 250`);
            await query.call(connection, sql.unsafe`select pg_sleep(1)`);
          }
          return rows;
        };
      },
    });
  const slowed = new Proxy(pool, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'transaction') return value;
      return (run: (connection: object) => Promise<unknown>) =>
        target.transaction((connection) => run(connectionOf(connection)));
    },
  });
  return { pool: slowed, reads };
}

t.test('a range read that runs out of the statement budget is read again in halves', async (t) => {
  const { db } = await setUp(t);
  const { pool, reads } = slowRanges(db.pool, 3);
  const ids = await exportedIds(postgresEventExporter(pool, SMALL), { sort: '-eventTimestamp' });
  t.same(
    ids,
    await idsInOrder(db.pool, ALL, sql.fragment`e.event_timestamp desc, e.id desc`),
    'every event once, in order',
  );
  t.ok(
    reads.some((n) => n > 3),
    'some reads ran out of the budget',
  );
  t.ok(
    reads.filter((n) => n <= 3).reduce((sum, n) => sum + n, 0) === ids.length,
    'the reads that fit hold every event',
  );

  // A range of the smallest size that still runs out ends the export with the statement's error.
  const hopeless = slowRanges(db.pool, 1);
  await t.rejects(exportedIds(postgresEventExporter(hopeless.pool, SMALL), {}), {
    message: /statement_timeout/,
  });
  t.comment(`reads: ${reads.length}, ${hopeless.reads.length}`);
});

t.test('a snapshot is held per export, released however it ends; one more is a 503', async (t) => {
  const { db } = await setUp(t);
  const exporter = postgresEventExporter(db.pool, { ...SMALL, maxSnapshots: 1 });
  const holders = async () =>
    Number(
      await db.pool.oneFirst(sql.unsafe`
        select count(*) from pg_stat_activity
        where datname = current_database() and query like '%pg_export_snapshot%' and state = 'idle in transaction'`),
    );
  const start = (query: RawQuery = {}) =>
    exporter.exportEvents(null, parseEventFilter(query), parseEventSort('id'), 'geojson');

  const first = await start();
  t.equal(await holders(), 1, 'the export holds its snapshot');
  await t.rejects(start(), { kind: 'unavailable', code: 'EXPORTS_BUSY' }, 'one more than the exporter holds');
  // Closed before its first batch (a client gone before the answer started).
  await first.batches[Symbol.asyncIterator]().return?.();
  t.equal(await holders(), 0, 'closed before reading: released');

  const second = await start();
  const iterator = second.batches[Symbol.asyncIterator]();
  await iterator.next();
  await iterator.return?.();
  t.equal(await holders(), 0, 'closed mid-way: released');

  t.ok((await exported(exporter, {}, 'csv')).length > 0);
  t.equal(await holders(), 0, 'read to the end: released');

  await t.rejects(
    exporter
      .exportEvents(null, parseEventFilter({ datasets: 'fires' }), parseEventSort('id'), 'csv')
      .then(async (text) => {
        // The holder goes away (the database ended it): the next statement cannot import the snapshot.
        await db.pool.query(sql.unsafe`
          select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and query like '%pg_export_snapshot%' and state = 'idle in transaction'`);
        for await (const chunk of text.batches) t.ok(chunk);
      }),
    'an export whose snapshot is gone fails rather than reading another',
  );
  t.equal(await holders(), 0);
  t.ok((await exported(exporter, {}, 'geojson')).length > 0, 'and the place is free again');
});

t.test(
  'CSV columns: the exported datasets’ keys, read again only after a write to the dataset',
  async (t) => {
    const { db, fixture } = await setUp(t);
    const { pool, seen } = watchedPool(db.pool, 'jsonb_object_keys');
    const exporter = postgresEventExporter(pool, SMALL);
    const header = async (query: RawQuery) => (await exported(exporter, query, 'csv')).split('\r\n')[0];
    const fires = fixture.datasetIds.fires ?? 0;
    await db.pool.query(sql.unsafe`
    update events set data = data || '{"only_in_2023": 1}'
    where id = (select min(id) from events where dataset_id = ${fires} and event_timestamp < '2024-01-01')`);

    t.equal(
      await header({ datasets: 'fires', startDate: '2024-01-01' }),
      'id,title,eventTimestamp,dataset,catalog,longitude,latitude,importJob,sourceRow,storedAt,changedAt,mag,only_in_2023,seq',
      'a key of the dataset is a column even when the filter leaves out the events that have it',
    );
    t.equal(seen.count, 1, 'the keys were read once');
    await header({ datasets: 'fires' });
    await header({ datasets: 'fires', startDate: '2024-06-01' });
    t.equal(seen.count, 1, 'and remembered while the dataset is unchanged');

    await db.pool.query(sql.unsafe`
    update events set data = data || '{"new_key": true}'
    where id = (select min(id) from events where dataset_id = ${fixture.datasetIds.protests ?? 0})`);
    await header({ datasets: 'fires' });
    t.equal(seen.count, 1, 'a write to another dataset does not read the keys again');
    t.equal(
      await header({ catalog: 'news' }),
      'id,title,eventTimestamp,dataset,catalog,longitude,latitude,importJob,sourceRow,storedAt,changedAt,mag,new_key,only_in_2023,seq',
      'the union over the catalog’s datasets, with the key written since',
    );
    t.equal(seen.count, 2, 'read again for the dataset written to');
  },
);
