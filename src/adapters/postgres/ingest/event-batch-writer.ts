import { Type } from 'typebox';
import type { CommonQueryMethods } from 'slonik';
import { transient } from '../../../domain/ingest/failures.ts';
import type { EventBatchWriter } from '../../../ports/ingest/event-batch-writer.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { storeEvents } from './event-store.ts';
import { progressSet } from './ingest-rows.ts';
import { takeEventsIn } from '../accounts/quotas.ts';

// create-events' batches: a batch's events, the stage's progress and counters, and the importer's
// event quota, written in one transaction.

/** How long a batch stored alongside others waits for a lock before it gives up (see commitEventBatch). */
const CONCURRENT_BATCH_LOCK_TIMEOUT_MS = 5_000;

/** The dataset's data version (migration 0240), raised by a batch that took it upon itself (0520). */
async function bumpDataVersion(tx: CommonQueryMethods, datasetId: number): Promise<void> {
  await tx.query(sql.unsafe`
    insert into dataset_data_versions (dataset_id, version) values (${datasetId}, 1)
    on conflict (dataset_id) do update set version = dataset_data_versions.version + 1`);
}

/** Settings of a batch stored at the same time as the one before it (see commitEventBatch). */
async function beginConcurrentBatch(tx: CommonQueryMethods): Promise<void> {
  await tx.query(sql.unsafe`
    select set_config('chronomap.bump_data_version_later', 'on', true),
           set_config('lock_timeout', ${`${CONCURRENT_BATCH_LOCK_TIMEOUT_MS}ms`}, true)`);
}

export function postgresEventBatchWriter(pool: DatabasePool): EventBatchWriter {
  return {
    async commitEventBatch(jobId, datasetId, events, handling, progress, delta, order, quota) {
      return pool.transaction(async (tx) => {
        // One of batches stored at once: its version bump waits for the batch before it (migration
        // 0520), and a lock it waits for longer than a few seconds is taken as a wait on a later
        // batch of its own (which waits in this process, unseen by PostgreSQL's deadlock
        // detection): the batch fails as recoverable and the stage resumes from its high-water mark.
        if (order) await beginConcurrentBatch(tx);
        const stored = await storeEvents(tx, datasetId, events, handling, jobId);
        if (order) await order.ready();
        // Compare-and-set on the high-water mark, counters added to the row's own. The row is locked
        // first, by its key: should the batch before hold it (it moved the mark and has not committed
        // yet) this waits for its commit or rollback, and the UPDATE, a new statement under READ
        // COMMITTED, then compares with what that left. (An UPDATE alone would compare with the
        // version its snapshot sees, find no match at once and never wait.)
        await tx.query(sql.unsafe`
          select 1 from ingest_job_stages where ingest_job_id = ${jobId} and stage = 'create-events'
          for no key update`);
        const moved = await tx.maybeOneFirst(sql.type(row(Type.Object({ counters: Type.Any() })))`
          update ingest_job_stages s
          set ${progressSet(progress)},
              counters = s.counters || (
                select coalesce(jsonb_object_agg(d.key, coalesce((s.counters ->> d.key)::bigint, 0) + d.value::bigint), '{}')
                from jsonb_each_text(${sql.jsonb(delta(stored))}) as d)
          where s.ingest_job_id = ${jobId} and s.stage = 'create-events' and s.rows_processed = ${progress.rowsBefore}
          returning s.counters`);
        if (moved === null)
          throw transient(
            'BATCH_OUT_OF_ORDER',
            `rows ${progress.rowsBefore + 1}-${progress.rowsProcessed} were not stored: the stage's progress is no longer at row ${progress.rowsBefore} (the batch before was not committed)`,
          );
        // Counted with the events, after the batch before committed (its count is then in the row).
        if (quota && stored.inserted > 0) {
          const createdByJob = Number((moved as Record<string, number>).created ?? 0);
          await takeEventsIn(tx, quota, stored.inserted, createdByJob - stored.inserted);
        }
        if (order && stored.inserted > 0) await bumpDataVersion(tx, datasetId);
        return { ...stored, counters: moved as Record<string, number> };
      });
    },
  };
}
