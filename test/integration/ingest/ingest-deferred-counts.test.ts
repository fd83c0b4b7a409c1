import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventStore, storeEvents } from '../../../src/adapters/postgres/ingest/event-store.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import { ensureDataset } from '../../helpers/collections.ts';
import {
  MIN_ROWS,
  N,
  Flag,
  csv,
  events,
  setup,
  runImport,
  pending,
  refresh,
  truth,
  assertApiExact,
  whileOpen,
} from './deferred-counts-fixtures.ts';

// Deferred counts (migration 0330, docs/ingestion.md "Deferred counts"): an import of at least
// INGEST_DEFER_COUNTS_MIN_ROWS rows into an empty dataset stores its events without the read API's
// counts; while the dataset is pending /api/v1 answers from the rows, exactly; the refresh then adds
// exactly what the triggers would have. Writers into a pending dataset, its deletion, and imports
// into non-empty datasets keep every count exact.

t.test(
  'an import into an empty dataset defers its counts; reads stay exact; the refresh adds them',
  async (t) => {
    const { app, db, catalogId, deps, queued, adminToken } = await setup(t);
    const store = postgresEventStore(db.pool);
    // Events counted by the triggers, in the same catalog and cells (one spot shared with the import).
    const other = await ensureDataset(db.pool, catalogId, {
      slug: 'counted',
      title: 'Counted',
      isPublic: true,
    });
    await store.insertEvents(other, events('c', 60));
    await assertCountTablesExact(t, db.pool, 'before the import');

    const small = await runImport(app, deps, catalogId, {
      name: 'small.csv',
      content: csv('s', MIN_ROWS - 1),
    });
    t.equal(await pending(db.pool, small), false, 'an import below the threshold is not deferred');
    t.same(queued, [], 'and queues no refresh');
    await assertCountTablesExact(t, db.pool, 'after an import below the threshold');

    const datasetId = await runImport(app, deps, catalogId, { name: 'big.csv', content: csv('b', 300) });
    t.equal(
      await pending(db.pool, datasetId),
      true,
      'an import of 300 rows into an empty dataset is deferred',
    );
    t.same(queued, [datasetId], 'create-events queued the refresh of its dataset');
    t.equal(
      await db.pool.oneFirst(sql.type(N)`
      select count(*)::int as n from event_counts where dataset_id = ${datasetId}`),
      0,
      'the count tables hold none of its events',
    );
    await assertApiExact(t, app, db.pool, datasetId, adminToken, 'while pending');

    // A writer into the pending dataset whose transaction is open when the refresh starts: the
    // refresh waits for it and then counts its events (the triggers left them out).
    const refreshed = await whileOpen(
      db.pool,
      async (tx) => {
        t.same(await storeEvents(tx, datasetId, events('w', 25), 'skip'), { inserted: 25, updated: 0 });
      },
      () => refresh(db.pool, datasetId),
      'chronomap_refresh_dataset_counts',
    );
    t.equal(refreshed, true, 'the refresh waited for the writer to commit, then ran');
    t.equal(await pending(db.pool, datasetId), false, 'the dataset is no longer pending');
    t.equal(await refresh(db.pool, datasetId), false, 'a second refresh finds nothing to do');
    await assertCountTablesExact(t, db.pool, 'after the refresh, with the concurrent writer');
    await assertApiExact(t, app, db.pool, datasetId, adminToken, 'after the refresh');

    // An import into the now non-empty dataset is not deferred: the triggers count it.
    queued.length = 0;
    await runImport(
      app,
      deps,
      catalogId,
      { name: 'more.csv', content: csv('m', 200) },
      { dataset: String(datasetId) },
    );
    t.equal(await pending(db.pool, datasetId), false, 'an import into a dataset with events is not deferred');
    t.same(queued, [], 'and queues no refresh');
    await assertCountTablesExact(t, db.pool, 'after an import into a non-empty dataset');
  },
);

t.test('a writer that waits for a refresh under way counts its own events', async (t) => {
  const { app, db, catalogId, deps } = await setup(t);
  const datasetId = await runImport(app, deps, catalogId, { name: 'big.csv', content: csv('b', 150) });
  t.equal(await pending(db.pool, datasetId), true);
  // The sweep's choice: a pending dataset whose import is over (or stopped committing batches),
  // never one whose create-events committed a batch lately.
  t.same(await deps.store.datasetsAwaitingCounts(120), [datasetId], 'the sweep would refresh it');
  await db.pool.query(sql.unsafe`
    update ingest_jobs j set stage = 'create-events' from ingest_job_stages s
    where s.ingest_job_id = j.id and s.stage = 'create-events' and j.dataset_id = ${datasetId}`);
  await db.pool.query(sql.unsafe`
    update ingest_job_stages s set status = 'in_progress', progressed_at = now() - interval '30 seconds'
    from ingest_jobs j where s.ingest_job_id = j.id and s.stage = 'create-events' and j.dataset_id = ${datasetId}`);
  t.same(await deps.store.datasetsAwaitingCounts(120), [], 'not while its import commits batches');
  await db.pool.query(sql.unsafe`
    update ingest_job_stages s set progressed_at = now() - interval '10 minutes', started_at = now() - interval '20 minutes'
    from ingest_jobs j where s.ingest_job_id = j.id and s.stage = 'create-events' and j.dataset_id = ${datasetId}`);
  t.same(await deps.store.datasetsAwaitingCounts(120), [datasetId], 'but once it has stopped for a while');
  const written = await whileOpen(
    db.pool,
    async (tx) => {
      t.equal(
        await tx.oneFirst(sql.type(Flag)`select chronomap_refresh_dataset_counts(${datasetId}) as pending`),
        true,
      );
    },
    () => storeEvents(db.pool, datasetId, events('w', 30), 'skip'),
    'insert into events',
  );
  t.same(written, { inserted: 30, updated: 0 }, 'the writer waited for the refresh (its foreign-key check)');
  t.equal(await pending(db.pool, datasetId), false);
  await assertCountTablesExact(t, db.pool, 'after a writer that waited for the refresh');
});

t.test(
  'deleting a pending dataset, or updating and deleting its events, leaves every count exact',
  async (t) => {
    const { app, db, catalogId, deps } = await setup(t);
    const store = postgresEventStore(db.pool);
    const other = await ensureDataset(db.pool, catalogId, {
      slug: 'counted',
      title: 'Counted',
      isPublic: true,
    });
    await store.insertEvents(other, events('c', 40));
    const first = await runImport(app, deps, catalogId, { name: 'one.csv', content: csv('a', 120) });
    const second = await runImport(app, deps, catalogId, { name: 'two.csv', content: csv('b', 120) });
    t.equal(await pending(db.pool, first), true);
    t.equal(await pending(db.pool, second), true);

    // One statement over a counted and a pending dataset: only the counted rows change the counts.
    await db.pool.query(sql.unsafe`
    update events set event_timestamp = event_timestamp + interval '40 days',
                      location = st_setsrid(st_makepoint(st_x(location) / 2, st_y(location) / 2), 4326)
    where id % 3 = 0 and dataset_id in (${other}, ${first})`);
    await db.pool.query(
      sql.unsafe`delete from events where id % 7 = 0 and dataset_id in (${other}, ${first})`,
    );
    await db.pool.query(sql.unsafe`delete from datasets where id = ${second}`);
    t.equal(await truth(db.pool, { datasetId: second }), 0, 'the deleted dataset took its events along');
    t.equal(await refresh(db.pool, second), false, 'a deleted dataset has nothing to refresh');
    t.equal(await refresh(db.pool, first), true);
    await assertCountTablesExact(t, db.pool, 'after updates, deletes and a deleted pending dataset');
  },
);

// Two batches at once (INGEST_DEFERRED_WRITERS): each batch's progress update is a compare-and-set
// on the stage's rows_processed, so batches commit in file order whatever order their INSERTs end in.
