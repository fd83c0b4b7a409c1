import type { CommonQueryMethods } from 'slonik';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { storeEvents } from '../../../src/adapters/postgres/ingest/event-store.ts';
import { runIngestJob } from '../../../src/application/ingest/run-ingest-job.ts';
import { transient } from '../../../src/domain/ingest/failures.ts';
import type { IngestStore } from '../../../src/ports/ingest/ingest-store.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import {
  N,
  csv,
  events,
  setup,
  pending,
  refresh,
  truth,
  stageOf,
  uploaded,
  eventsLike,
  whileOpen,
} from './deferred-counts-fixtures.ts';

// Deferred counts under concurrent batches (migration 0330, docs/ingestion.md "Deferred counts"):
// the high-water mark moves only from where the batch before left it, and a failed batch takes
// the one stored beside it along, so the resumed import still counts exactly.

t.test('a batch moves the high-water mark only from where the batch before left it', async (t) => {
  const { app, db, catalogId, deps } = await setup(t);
  const { jobId, datasetId } = await uploaded(app, catalogId, { name: 'cas.csv', content: csv('c', 120) });
  await deps.store.startStage(jobId, 'create-events');
  // Batches are stored at once only while their dataset's counts are deferred.
  t.equal(await deps.store.deferDatasetCounts(datasetId), true);
  const delta = (stored: { inserted: number; updated: number }) => ({ created: stored.inserted });
  const progress = (rowsBefore: number, rowsProcessed: number) => ({ rowsBefore, rowsProcessed });
  // The batch before, as its transaction stands when it is about to commit (it stored its events
  // beside the later batch: it raises the data version itself, migration 0520).
  const earlier = async (tx: CommonQueryMethods) => {
    await tx.query(sql.unsafe`select set_config('chronomap.bump_data_version_later', 'on', true)`);
    await storeEvents(tx, datasetId, events('a', 40), 'skip');
    await tx.query(sql.unsafe`
      update ingest_job_stages set rows_processed = 40, counters = '{"created": 40}'
      where ingest_job_id = ${jobId} and stage = 'create-events' and rows_processed = 0`);
    await tx.query(sql.unsafe`
      insert into dataset_data_versions (dataset_id, version) values (${datasetId}, 1)
      on conflict (dataset_id) do update set version = dataset_data_versions.version + 1`);
  };
  // The later batch, stored beside it; its wait for the earlier's commit is left to the database.
  const later = () =>
    deps.store.commitEventBatch(jobId, datasetId, events('b', 40), 'skip', progress(40, 80), delta, {
      ready: async () => {},
    });
  const version = () =>
    db.pool.maybeOneFirst(sql.type(N)`
      select version::int as n from dataset_data_versions where dataset_id = ${datasetId}`);

  const failed = await whileOpen(
    db.pool,
    earlier,
    () =>
      later().then(
        () => null,
        (error: unknown) => error,
      ),
    'ingest_job_stages where ingest_job_id',
    'rollback',
  );
  t.match(
    failed,
    { code: 'BATCH_OUT_OF_ORDER', classification: 'recoverable' },
    'the earlier rolled back: so does the later',
  );
  t.same(await stageOf(db.pool, jobId), { rows: 0, counters: {} }, 'the high-water mark did not move');
  t.equal(await eventsLike(db.pool, datasetId, 'a'), 0, 'no event of the earlier batch');
  t.equal(await eventsLike(db.pool, datasetId, 'b'), 0, 'no event of the later batch');
  t.equal(await version(), null, 'no data version raised');

  const stored = await whileOpen(db.pool, earlier, later, 'ingest_job_stages where ingest_job_id');
  t.same(
    stored,
    { inserted: 40, updated: 0, counters: { created: 80 } },
    'its counters added to the committed ones',
  );
  t.same(
    await stageOf(db.pool, jobId),
    { rows: 80, counters: { created: 80 } },
    'the earlier committed: the later follows it',
  );
  t.equal(await eventsLike(db.pool, datasetId, 'b'), 40);
  t.equal(await version(), 2, 'each batch raised the data version once');

  await t.rejects(
    deps.store.commitEventBatch(jobId, datasetId, events('d', 40), 'skip', progress(40, 120), delta),
    { code: 'BATCH_OUT_OF_ORDER' },
    'a batch that continues from a row the stage has passed stores nothing',
  );
  t.equal(await eventsLike(db.pool, datasetId, 'd'), 0);
  t.same(await stageOf(db.pool, jobId), { rows: 80, counters: { created: 80 } });
});

t.test(
  'two batches at once: a batch that fails takes the one stored beside it along; the import resumes exactly',
  async (t) => {
    const { app, db, catalogId, deps } = await setup(t);
    const { jobId, datasetId } = await uploaded(app, catalogId, { name: 'two.csv', content: csv('t', 300) });
    // The real store, with waits and a failure injected inside a batch's transaction once its
    // events are stored: batch 1 goes on only when batch 2 has stored its events too (so batch 2's
    // INSERT ends first), and batch 4 fails once batch 5 has stored its events.
    const stored = new Map<number, () => void>();
    const storedToo = new Map<number, Promise<void>>();
    for (let rowsBefore = 0; rowsBefore < 300; rowsBefore += 40)
      storedToo.set(rowsBefore, new Promise<void>((resolve) => stored.set(rowsBefore, resolve)));
    let inFlight = 0;
    let most = 0;
    let fail = true;
    const store: IngestStore = {
      ...deps.store,
      async commitEventBatch(jobId, datasetId, batch, handling, progress, delta, order) {
        inFlight += 1;
        most = Math.max(most, inFlight);
        const ready = async () => {
          stored.get(progress.rowsBefore)?.();
          if (progress.rowsBefore === 0 || (progress.rowsBefore === 120 && fail))
            await storedToo.get(progress.rowsBefore + 40);
          if (progress.rowsBefore === 120 && fail) throw transient('INJECTED', 'batch 4 failed');
          await order?.ready();
        };
        try {
          return await deps.store.commitEventBatch(jobId, datasetId, batch, handling, progress, delta, {
            ready,
          });
        } finally {
          inFlight -= 1;
        }
      },
    };
    const outcome = await runIngestJob({ ...deps, store }, jobId);
    t.equal(outcome, 'retry-scheduled', 'the failure is recoverable');
    t.equal(most, 2, 'two batches were stored at once');
    t.same(
      await stageOf(db.pool, jobId),
      { rows: 120, counters: { created: 120, updated: 0, duplicates: 0, invalid: 0, geocoded: 0 } },
      'the high-water mark and the counters are those of batches 1-3',
    );
    t.equal(await truth(db.pool, { datasetId }), 120, 'batch 5, stored beside batch 4, rolled back with it');
    t.equal(
      await db.pool.oneFirst(sql.type(N)`
        select count(*)::int as n from events
        where dataset_id = ${datasetId} and substr(unique_id, 2)::int >= 120`),
      0,
      'no event after row 120',
    );

    fail = false;
    t.equal(await runIngestJob({ ...deps, store }, jobId), 'completed', 'the import resumes');
    t.same(await stageOf(db.pool, jobId), {
      rows: 300,
      counters: { created: 300, updated: 0, duplicates: 0, invalid: 0, geocoded: 0 },
    });
    t.equal(await truth(db.pool, { datasetId }), 300, 'every row once');
    t.equal(
      await db.pool.oneFirst(sql.type(N)`
        select version::int as n from dataset_data_versions where dataset_id = ${datasetId}`),
      8,
      'each committed batch raised the data version once (migration 0520)',
    );
    t.equal(await pending(db.pool, datasetId), true);
    t.equal(await refresh(db.pool, datasetId), true);
    await assertCountTablesExact(t, db.pool, 'after an import stored two batches at once');
  },
);
