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
// order; a range written into after its bounds were found is split and read again; the CSV columns
// are the union of the exported datasets' keys, read again only for a dataset written since.

const SMALL = { batchSize: 7, boundsPerStatement: 3, rangeReadLimit: 14 };

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
    t.ok(some.length > SMALL.batchSize * SMALL.boundsPerStatement, `${sort}: more than one bounds statement`);
  }
});

t.test('a range written into after its bounds were found is split and read again', async (t) => {
  const { db, fixture } = await setUp(t);
  const first = await idsInOrder(db.pool, ALL, BY_TIME);
  const [lowest, seventh] = await db.pool.any(sql.unsafe`
    select event_timestamp::text as at from events where id = any(${sql.array([first[0] ?? 0, first[6] ?? 0], 'int8')})
    order by event_timestamp`);
  // Once the first bounds are known, 30 events land inside the first range (more than a read takes).
  const { pool } = watchedPool(db.pool, 'export_bounds', async () => {
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
      select ${fixture.datasetIds.fires ?? 0}, ${fixture.catalogIds.news ?? 0}, 'late-' || i, 'late', '{}',
             ${(lowest as { at: string }).at}::timestamptz
               + (${(seventh as { at: string }).at}::timestamptz - ${(lowest as { at: string }).at}::timestamptz) * i / 40
      from generate_series(1, 30) i`);
  });
  const ids = await exportedIds(postgresEventExporter(pool, SMALL), { sort: 'eventTimestamp' });
  const now = await idsInOrder(db.pool, ALL, BY_TIME);
  t.equal(now.length, first.length + 30, 'the events were written during the export');
  t.same(ids, now, 'the export has them all, once each, in order');
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
      'id,title,eventTimestamp,dataset,catalog,longitude,latitude,mag,only_in_2023,seq',
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
      'id,title,eventTimestamp,dataset,catalog,longitude,latitude,mag,new_key,only_in_2023,seq',
      'the union over the catalog’s datasets, with the key written since',
    );
    t.equal(seen.count, 2, 'read again for the dataset written to');
  },
);
