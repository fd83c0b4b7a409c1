import pg from 'pg';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { scopeResolver } from '../../../src/adapters/postgres/read/scope.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import { assertCountTablesExact, countTableMode, SEES_EVERYTHING } from '../../helpers/count-tables.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// The level-16 cells' mode (migration 0969; docs/scaling.md, "Step 3"): kept (written and read),
// draining (written, not read), off (empty, neither). Every writer honours it (the events'
// statement triggers and the deferred refresh), the readers read the cells only while kept, and a
// rebuild gives the exact table back, waiting for a refresh that read 'off' to commit first.

const Done = row(Type.Object({ done: Type.Union([Type.Boolean(), Type.Null()]) }));
const Count = row(Type.Object({ n: Type.Number() }));

t.test('the level-16 cells follow their mode', async (t) => {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  const catalogId = Object.values(fixture.catalogIds)[0] as number;
  const datasetId = Object.values(fixture.datasetIds)[0] as number;

  const mode = () => countTableMode(db.pool, 'event_fine_cell_counts');
  const change = async (step: 'drain' | 'keep' | 'drop' | 'rebuild') =>
    (await db.pool.oneFirst(
      sql.type(Done)`select ${sql.identifier([`chronomap_fine_cells_${step}`])}() as done`,
    )) === true;
  const fineRows = () =>
    db.pool.oneFirst(sql.type(Count)`select count(*)::int as n from event_fine_cell_counts`);
  // A fresh resolver each time: one caches the density (and so the mode) for a minute.
  const fineCellsRead = async () =>
    (await scopeResolver(db.pool, { fineCellsMinDensity: 0 }).scopeOf(SEES_EVERYTHING, parseEventFilter({})))
      .fineCells;
  let next = 0;
  const addEvents = async (dataset: number, count: number) => {
    for (let i = 0; i < count; i += 1) {
      next += 1;
      await db.pool.query(sql.unsafe`
        insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
        select id, catalog_id, ${`mode-${next}`}, 'added', '{}'::jsonb,
               st_setsrid(st_makepoint(${-170 + next * 3.7}, ${-60 + (next % 30) * 4.1}), 4326),
               ${`2024-0${1 + (next % 9)}-1${next % 10}`}::timestamptz
        from datasets where id = ${dataset}`);
    }
  };
  const pendingDataset = async (slug: string) =>
    db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
      insert into datasets (catalog_id, slug, title, is_public, counts_pending)
      values (${catalogId}, ${slug}, ${slug}, true, true) returning id`);
  const refresh = (dataset: number) =>
    db.pool.query(sql.unsafe`select chronomap_refresh_dataset_counts(${dataset})`);

  t.equal(await mode(), 'kept', 'kept after the migration: nothing changes until a switch');
  t.ok((await fineRows()) > 0);
  t.equal(await fineCellsRead(), true, 'kept: the readers read the cells');
  t.equal(await change('drop'), false, 'a kept table is not dropped without draining first');
  t.equal(await change('rebuild'), false, 'nor rebuilt');

  t.equal(await change('drain'), true);
  t.equal(await mode(), 'draining');
  t.equal(await fineCellsRead(), false, 'draining: no reader reads the cells');
  await addEvents(datasetId, 5);
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'mode-1'`);
  await assertCountTablesExact(t, db.pool, 'draining: still written');
  t.equal(await change('keep'), true, 'a drain can be undone');
  t.equal(await fineCellsRead(), true);

  t.equal(await change('drain'), true);
  t.equal(await change('drop'), true);
  t.equal(await mode(), 'off');
  t.equal(await fineRows(), 0, 'off: the table is empty');
  const reltuples = await db.pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`
      select reltuples::float8 as n from pg_class where oid = 'event_fine_cell_counts'::regclass`,
  );
  t.ok(reltuples <= 0, 'its statistics say so: the previous release reads no density from them');
  t.equal(await fineCellsRead(), false, 'off: no reader reads the cells');
  await addEvents(datasetId, 5);
  await db.pool.query(sql.unsafe`update events set location = st_setsrid(st_makepoint(10, 10), 4326)
                                 where unique_id = 'mode-2'`);
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'mode-3'`);
  const bulk = await pendingDataset('bulk-while-off');
  await addEvents(bulk, 6);
  await refresh(bulk);
  t.equal(await fineRows(), 0, 'no writer writes the cells while off: triggers and refresh');
  await assertCountTablesExact(t, db.pool, 'off, after inserts, an update, a delete and a refresh');

  t.equal(await change('rebuild'), true);
  t.equal(await mode(), 'kept');
  await assertCountTablesExact(t, db.pool, 'rebuilt');
  t.equal(await fineCellsRead(), true, 'rebuilt and analysed: read again');
  await addEvents(datasetId, 3);
  await assertCountTablesExact(t, db.pool, 'kept again, after inserts');

  // A refresh that read 'off' and a rebuild at once: the rebuild waits for the refresh's
  // transaction, then counts its dataset (no longer pending) once.
  t.equal(await change('drain'), true);
  t.equal(await change('drop'), true);
  const late = await pendingDataset('refreshed-during-rebuild');
  await addEvents(late, 4);
  // Slonik keeps a transaction's callback from using any pool: the rebuild and its watcher are
  // plain node-postgres clients.
  const rebuilder = new pg.Client({ connectionString: db.url });
  const watcher = new pg.Client({ connectionString: db.url });
  await rebuilder.connect();
  await watcher.connect();
  t.teardown(() => Promise.all([rebuilder.end(), watcher.end()]));
  let rebuilt: Promise<boolean | null> = Promise.resolve(null);
  await db.pool.transaction(async (refreshing) => {
    await refreshing.query(sql.unsafe`select chronomap_refresh_dataset_counts(${late})`);
    rebuilt = rebuilder
      .query<{ done: boolean | null }>('select chronomap_fine_cells_rebuild() as done')
      .then((result) => result.rows[0]?.done ?? null);
    rebuilt.catch(() => {});
    // The rebuild waits on the refresh's shared lock: polled until it is seen waiting (30 s at most).
    for (let polls = 0; ; polls += 1) {
      const { rows } = await watcher.query<{ n: number }>(
        `select count(*)::int as n from pg_locks
         where locktype = 'advisory' and not granted
           and database = (select oid from pg_database where datname = current_database())`,
      );
      if ((rows[0]?.n ?? 0) > 0) break;
      if (polls > 600) throw new Error('the rebuild never waited for the refresh');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.equal(
      await countTableMode(refreshing, 'event_fine_cell_counts'),
      'off',
      'the rebuild has not taken effect while the refresh is open',
    );
    // The refresh commits at the end of this callback; then the rebuild goes on.
  });
  t.equal(await rebuilt, true, 'the rebuild ran once the refresh had committed');
  t.equal(await mode(), 'kept');
  await assertCountTablesExact(t, db.pool, 'a rebuild that waited for a refresh');
});
