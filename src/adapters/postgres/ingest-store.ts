import { Type } from 'typebox';
import type { StageRecord } from '../../domain/ingest/progress.ts';
import { transient } from '../../domain/ingest/failures.ts';
import { datasetSlug, type JobConfig } from '../../domain/ingest/settings.ts';
import { type Stage, stagesFrom, type TaskStage } from '../../domain/ingest/stages.ts';
import type {
  GeocodeOutcome,
  IngestFile,
  IngestJob,
  IngestStore,
  Progress,
  StoredStage,
} from '../../ports/ingest-store.ts';
import type { CommonQueryMethods } from 'slonik';
import { type DatabasePool, row, sql } from './database.ts';
import { takeEventsIn } from './quotas.ts';
import { storeEvents } from './event-store.ts';
import { outcomeFromRow, outcomeRows } from './geocode-cache.ts';

// Ingest files, jobs and stage records in PostgreSQL. A stage's progress and counters are written in
// the same transaction as the events they count.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const FileRow = row(
  Type.Object({
    id: Type.Number(),
    original_name: Type.String(),
    stored_path: Type.String(),
    size_bytes: Type.Number(),
    mime_type: Nullable(Type.String()),
    format: Type.String(),
    source: Type.String(),
    status: Type.String(),
    catalog_id: Nullable(Type.Number()),
    uploaded_by: Nullable(Type.Number()),
    settings: Type.Any(),
    error_log: Type.Any(),
    created_at: Type.String(),
    updated_at: Type.String(),
    completed_at: Nullable(Type.String()),
  }),
);

const JobRow = row(
  Type.Object({
    id: Type.Number(),
    ingest_file_id: Type.Number(),
    sheet_index: Type.Number(),
    sheet_name: Nullable(Type.String()),
    dataset_id: Nullable(Type.Number()),
    dataset_name: Nullable(Type.String()),
    stage: Type.String(),
    config: Type.Any(),
    error_log: Type.Any(),
    review_reasons: Type.Any(),
    approved_at: Nullable(Type.String()),
    retry_attempts: Type.Number(),
    last_retry_at: Nullable(Type.String()),
    next_retry_at: Nullable(Type.String()),
    failed_at: Nullable(Type.String()),
    completed_at: Nullable(Type.String()),
    created_at: Type.String(),
    file_name: Type.String(),
  }),
);

const StageRow = row(
  Type.Object({
    stage: Type.String(),
    status: Type.String(),
    started_at: Nullable(Type.String()),
    completed_at: Nullable(Type.String()),
    rows_total: Type.Number(),
    rows_processed: Type.Number(),
    batches_total: Type.Number(),
    batches_current: Type.Number(),
    batch_rows_total: Type.Number(),
    batch_rows_processed: Type.Number(),
    counters: Type.Any(),
    output: Type.Any(),
  }),
);

const Id = row(Type.Object({ id: Type.Number() }));
/** How long a batch stored alongside others waits for a lock before it gives up (see commitEventBatch). */
const CONCURRENT_BATCH_LOCK_TIMEOUT_MS = 5_000;
const Count = row(Type.Object({ count: Type.Number() }));
const Exists = row(Type.Object({ exists: Type.Boolean() }));

function toFile(r: Record<string, unknown>): IngestFile {
  return {
    id: r.id as number,
    originalName: r.original_name as string,
    storedPath: r.stored_path as string,
    sizeBytes: r.size_bytes as number,
    mimeType: r.mime_type as string | null,
    format: r.format as IngestFile['format'],
    source: r.source as IngestFile['source'],
    status: r.status as IngestFile['status'],
    catalogId: r.catalog_id as number | null,
    uploadedBy: r.uploaded_by as number | null,
    settings: r.settings as IngestFile['settings'],
    errorLog: r.error_log as string[],
    createdAt: r.created_at as string,
    updatedAt: r.updated_at as string,
    completedAt: r.completed_at as string | null,
  };
}

function toJob(r: Record<string, unknown>): IngestJob & { fileName: string } {
  return {
    id: r.id as number,
    ingestFileId: r.ingest_file_id as number,
    sheetIndex: r.sheet_index as number,
    sheetName: r.sheet_name as string | null,
    datasetId: r.dataset_id as number | null,
    datasetName: r.dataset_name as string | null,
    stage: r.stage as Stage,
    config: r.config as JobConfig,
    errorLog: (r.error_log ?? null) as IngestJob['errorLog'],
    reviewReasons: (r.review_reasons ?? null) as string[] | null,
    approvedAt: r.approved_at as string | null,
    retryAttempts: r.retry_attempts as number,
    lastRetryAt: r.last_retry_at as string | null,
    nextRetryAt: r.next_retry_at as string | null,
    failedAt: r.failed_at as string | null,
    completedAt: r.completed_at as string | null,
    createdAt: r.created_at as string,
    fileName: r.file_name as string,
  };
}

function toStage(r: Record<string, unknown>): StoredStage {
  const record: StageRecord = {
    stage: r.stage as TaskStage,
    status: r.status as StageRecord['status'],
    startedAt: r.started_at as string | null,
    completedAt: r.completed_at as string | null,
    rowsTotal: r.rows_total as number,
    rowsProcessed: r.rows_processed as number,
    batchesTotal: r.batches_total as number,
    batchesCurrent: r.batches_current as number,
    batchRowsTotal: r.batch_rows_total as number,
    batchRowsProcessed: r.batch_rows_processed as number,
  };
  return { ...record, counters: (r.counters ?? {}) as Record<string, number>, output: r.output ?? null };
}

const jobSelect = sql.fragment`
  select j.id, j.ingest_file_id, j.sheet_index, j.sheet_name, j.dataset_id, d.title as dataset_name, j.stage,
         j.config, j.error_log, j.review_reasons, j.approved_at, j.retry_attempts, j.last_retry_at,
         j.next_retry_at, j.failed_at, j.completed_at, j.created_at, f.original_name as file_name
  from ingest_jobs j
  join ingest_files f on f.id = j.ingest_file_id
  left join datasets d on d.id = j.dataset_id`;

const progressSet = (progress: Progress) => sql.fragment`
  rows_processed = ${progress.rowsProcessed}, progressed_at = now(),
  rows_total = coalesce(${progress.rowsTotal ?? null}::bigint, rows_total),
  batches_total = coalesce(${progress.batchesTotal ?? null}::int, batches_total),
  batches_current = coalesce(${progress.batchesCurrent ?? null}::int, batches_current),
  batch_rows_total = coalesce(${progress.batchRowsTotal ?? null}::int, batch_rows_total),
  batch_rows_processed = coalesce(${progress.batchRowsProcessed ?? null}::int, batch_rows_processed)`;

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

export function postgresIngestStore(pool: DatabasePool): IngestStore {
  const getJob = async (id: number) => {
    const found = await pool.maybeOne(sql.type(JobRow)`${jobSelect} where j.id = ${id}`);
    return found ? toJob(found) : null;
  };

  return {
    async createFile(file, jobs) {
      return pool.transaction(async (tx) => {
        const created = await tx.one(sql.type(FileRow)`
          insert into ingest_files (original_name, stored_path, size_bytes, mime_type, format, source, catalog_id,
                                    uploaded_by, settings)
          values (${file.originalName}, ${file.storedPath}, ${file.sizeBytes}, ${file.mimeType}, ${file.format},
                  ${file.source}, ${file.catalogId}, ${file.uploadedBy}, ${sql.jsonb(file.settings as never)})
          returning *`);
        const ids: number[] = [];
        for (const job of jobs) {
          ids.push(
            await tx.oneFirst(sql.type(Id)`
              insert into ingest_jobs (ingest_file_id, sheet_index, sheet_name, dataset_id, config)
              values (${created.id}, ${job.sheetIndex}, ${job.sheetName}, ${job.datasetId}, ${sql.jsonb(job.config as never)})
              returning id`),
          );
        }
        const stored = await tx.any(
          sql.type(JobRow)`${jobSelect} where j.id = any(${sql.array(ids, 'int8')}) order by j.sheet_index`,
        );
        return { file: toFile(created), jobs: stored.map(toJob) };
      });
    },

    async getFile(id) {
      const found = await pool.maybeOne(sql.type(FileRow)`select * from ingest_files where id = ${id}`);
      return found ? toFile(found) : null;
    },

    async filesUploadedBy(userId, limit) {
      const rows = await pool.any(sql.type(FileRow)`
        select * from ingest_files where uploaded_by = ${userId} order by created_at desc, id desc limit ${limit}`);
      return rows.map(toFile);
    },

    getJob,

    async jobsOfFile(fileId) {
      const rows = await pool.any(
        sql.type(JobRow)`${jobSelect} where j.ingest_file_id = ${fileId} order by j.sheet_index`,
      );
      return rows.map(toJob);
    },

    async stages(jobId) {
      const rows = await pool.any(
        sql.type(StageRow)`select * from ingest_job_stages where ingest_job_id = ${jobId}`,
      );
      return rows.map(toStage);
    },

    async startStage(jobId, stage) {
      return pool.transaction(async (tx) => {
        await tx.query(
          sql.unsafe`update ingest_jobs set stage = ${stage}, updated_at = now() where id = ${jobId}`,
        );
        await tx.query(sql.unsafe`
          update ingest_files set status = 'processing', updated_at = now()
          where id = (select ingest_file_id from ingest_jobs where id = ${jobId}) and status = 'pending'`);
        const stored = await tx.one(sql.type(StageRow)`
          insert into ingest_job_stages (ingest_job_id, stage, status, started_at)
          values (${jobId}, ${stage}, 'in_progress', now())
          on conflict (ingest_job_id, stage) do update
            set status = 'in_progress', started_at = coalesce(ingest_job_stages.started_at, now())
          returning *`);
        return toStage(stored);
      });
    },

    async reportProgress(jobId, stage, progress) {
      await pool.query(sql.unsafe`
        update ingest_job_stages set ${progressSet(progress)}
        where ingest_job_id = ${jobId} and stage = ${stage}`);
    },

    async completeStage(jobId, stage, status, output) {
      await pool.query(sql.unsafe`
        update ingest_job_stages
        set status = ${status}, completed_at = now(), output = ${sql.jsonb((output ?? null) as never)},
            rows_processed = greatest(rows_processed, rows_total)
        where ingest_job_id = ${jobId} and stage = ${stage}`);
    },

    async markNeedsReview(jobId, reasons) {
      await pool.query(sql.unsafe`
        update ingest_jobs set stage = 'needs-review', review_reasons = ${sql.jsonb(reasons)}, updated_at = now()
        where id = ${jobId}`);
    },

    async markCompleted(jobId, warnings) {
      await pool.query(sql.unsafe`
        update ingest_jobs
        set stage = 'completed', completed_at = now(), next_retry_at = null, updated_at = now(),
            error_log = ${warnings ? sql.jsonb(warnings as never) : null}::jsonb
        where id = ${jobId}`);
    },

    async markFailed(jobId, errorLog) {
      await pool.query(sql.unsafe`
        update ingest_jobs
        set stage = 'failed', error_log = ${sql.jsonb(errorLog as never)}, failed_at = now(), next_retry_at = null,
            updated_at = now()
        where id = ${jobId}`);
    },

    async scheduleRetry(jobId, retry) {
      await pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`
          update ingest_jobs
          set stage = ${retry.restartStage}, retry_attempts = ${retry.attempts}, last_retry_at = now(),
              next_retry_at = ${retry.nextRetryAt}, error_log = ${sql.jsonb(retry.errorLog as never)}, failed_at = null,
              updated_at = now()
          where id = ${jobId}`);
        // Later stages start over; the restart stage itself keeps its checkpoint (committed batches).
        const later = stagesFrom(retry.restartStage).slice(1);
        await tx.query(sql.unsafe`
          delete from ingest_job_stages where ingest_job_id = ${jobId} and stage = any(${sql.array(later, 'text')})`);
      });
    },

    async resetToStage(jobId, stage) {
      await pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`
          delete from ingest_job_stages
          where ingest_job_id = ${jobId} and stage = any(${sql.array(stagesFrom(stage), 'text')})`);
        if (stagesFrom(stage).includes('geocode-batch')) {
          await tx.query(sql.unsafe`delete from ingest_job_geocodes where ingest_job_id = ${jobId}`);
        }
        await tx.query(sql.unsafe`
          update ingest_jobs
          set stage = ${stage}, failed_at = null, completed_at = null, next_retry_at = null, review_reasons = null,
              updated_at = now()
          where id = ${jobId}`);
      });
    },

    async revise(jobId, { approved, config }) {
      await pool.query(sql.unsafe`
        update ingest_jobs
        set approved_at = case when ${approved} then now() else approved_at end, config = coalesce(${config ? sql.jsonb(config as never) : null}::jsonb, config),
            updated_at = now()
        where id = ${jobId}`);
    },

    async refreshFileStatus(fileId) {
      await pool.query(sql.unsafe`
        with s as (
          select count(*) as total,
                 count(*) filter (where stage = 'completed') as completed,
                 count(*) filter (where stage = 'failed') as failed,
                 -- A job waiting for a decision, not one passing through the needs-review task.
                 count(*) filter (where stage = 'needs-review' and review_reasons is not null
                                    and approved_at is null) as review
          from ingest_jobs where ingest_file_id = ${fileId}
        )
        update ingest_files f
        set status = case
              when s.completed = s.total then 'completed'
              when s.failed = s.total then 'failed'
              when s.completed + s.failed = s.total then 'partial'
              when s.review > 0 and s.completed + s.failed + s.review = s.total then 'needs-review'
              else 'processing' end,
            completed_at = case when s.completed + s.failed = s.total then coalesce(f.completed_at, now()) else null end,
            error_log = (
              select coalesce(jsonb_agg(
                       coalesce(j.sheet_name, 'sheet ' || (j.sheet_index + 1)) || ': ' || (j.error_log->>'lastError')
                       order by j.sheet_index), '[]'::jsonb)
              from ingest_jobs j
              where j.ingest_file_id = f.id and j.stage in ('failed', 'completed') and j.error_log is not null),
            updated_at = now()
        from s
        where f.id = ${fileId}`);
      return this.getFile(fileId);
    },

    async failedJobs(visibility) {
      const visible =
        visibility.kind === 'all'
          ? sql.fragment`true`
          : sql.fragment`(f.uploaded_by = ${visibility.userId} or c.created_by = ${visibility.userId})`;
      const rows = await pool.any(sql.type(JobRow)`
        ${jobSelect} left join catalogs c on c.id = f.catalog_id
        where (j.stage = 'failed' or j.next_retry_at is not null) and ${visible}
        order by j.failed_at desc nulls first, j.id`);
      return rows.map(toJob);
    },

    async createDataset(catalogId, title, userId) {
      const slug = datasetSlug(title, Math.random().toString(36).slice(2, 8));
      return pool.one(sql.type(row(Type.Object({ id: Type.Number(), title: Type.String() })))`
        insert into datasets (catalog_id, slug, title, created_by)
        values (${catalogId}, ${slug}, ${title}, ${userId})
        returning id, title`);
    },

    async datasetInCatalog(datasetId, catalogId) {
      return pool.oneFirst(sql.type(Exists)`
        select exists (select 1 from datasets where id = ${datasetId} and catalog_id = ${catalogId}) as exists`);
    },

    async catalogExists(catalogId) {
      return pool.oneFirst(
        sql.type(Exists)`select exists (select 1 from catalogs where id = ${catalogId}) as exists`,
      );
    },

    async countExisting(datasetId, uniqueIds) {
      if (uniqueIds.length === 0) return 0;
      return pool.oneFirst(sql.type(Count)`
        select count(*)::int as count from events
        where dataset_id = ${datasetId} and unique_id = any(${sql.array(uniqueIds, 'text')})`);
    },

    async removeEmptyDataset(datasetId) {
      const removed = await pool.query(sql.unsafe`
        delete from datasets d
        where d.id = ${datasetId}
          and not exists (select 1 from events e where e.dataset_id = d.id)
          and not exists (select 1 from ingest_jobs j where j.dataset_id = d.id and j.stage <> 'failed')`);
      return removed.rowCount > 0;
    },

    async datasetHasEvents(datasetId) {
      return pool.oneFirst(
        sql.type(Exists)`select exists (select 1 from events where dataset_id = ${datasetId}) as exists`,
      );
    },

    async deferDatasetCounts(datasetId) {
      // FOR UPDATE (not NO KEY UPDATE) waits for every writer in flight, whose foreign-key checks hold
      // KEY SHARE on the row; the check for events is a new statement, so it sees what they committed.
      return pool.transaction(async (tx) => {
        const found = await tx.maybeOne(
          sql.type(Exists)`select counts_pending as exists from datasets where id = ${datasetId} for update`,
        );
        if (!found) return false;
        if (found.exists) return true;
        const empty = !(await tx.oneFirst(
          sql.type(Exists)`select exists (select 1 from events where dataset_id = ${datasetId}) as exists`,
        ));
        if (empty)
          await tx.query(sql.unsafe`update datasets set counts_pending = true where id = ${datasetId}`);
        return empty;
      });
    },

    async datasetCountsPending(datasetId) {
      return pool.oneFirst(sql.type(Exists)`
        select exists (select 1 from datasets where id = ${datasetId} and counts_pending) as exists`);
    },

    async refreshDatasetCounts(datasetId) {
      // One pass over a whole import (a million events: minutes), beyond the pool's statement timeout.
      return pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`set local statement_timeout = 0`);
        return tx.oneFirst(sql.type(Exists)`select chronomap_refresh_dataset_counts(${datasetId}) as exists`);
      });
    },

    async datasetsAwaitingCounts(idleSeconds) {
      // Pending datasets that no import is writing to: none of their jobs is in create-events with
      // progress (or a start) within the last idleSeconds.
      const rows = await pool.any(sql.type(row(Type.Object({ id: Type.Number() })))`
        select d.id from datasets d
        where d.counts_pending
          and not exists (
            select 1 from ingest_jobs j
            join ingest_job_stages s on s.ingest_job_id = j.id and s.stage = 'create-events'
            where j.dataset_id = d.id and j.stage = 'create-events' and s.status = 'in_progress'
              and greatest(s.progressed_at, s.started_at) > now() - make_interval(secs => ${idleSeconds}))
        order by d.id`);
      return rows.map((r) => r.id);
    },

    async commitEventBatch(jobId, datasetId, events, handling, progress, delta, order, quota) {
      return pool.transaction(async (tx) => {
        // One of batches stored at once: its version bump waits for the batch before it (migration
        // 0520), and a lock it waits for longer than a few seconds is taken as a wait on a later
        // batch of its own (which waits in this process, unseen by PostgreSQL's deadlock
        // detection): the batch fails as recoverable and the stage resumes from its high-water mark.
        if (order) await beginConcurrentBatch(tx);
        const stored = await storeEvents(tx, datasetId, events, handling);
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

    async latestSchema(datasetId) {
      const found = await pool.maybeOne(sql.type(
        row(Type.Object({ version: Type.Number(), fields: Type.Any(), mapping: Type.Any() })),
      )`
        select version, fields, mapping from dataset_schema_versions
        where dataset_id = ${datasetId} order by version desc limit 1`);
      return found ? { version: found.version, fields: found.fields, mapping: found.mapping } : null;
    },

    async createSchemaVersion(datasetId, jobId, fields, mapping) {
      // One version per job: a restarted stage finds the version it made before.
      return pool.transaction(async (tx) => {
        await tx.query(
          sql.unsafe`select pg_advisory_xact_lock(hashtext('dataset_schema_versions'), ${datasetId}::int)`,
        );
        const existing = await tx.maybeOneFirst(sql.type(row(Type.Object({ version: Type.Number() })))`
          select version from dataset_schema_versions where ingest_job_id = ${jobId}`);
        if (existing !== null) return existing;
        return tx.oneFirst(sql.type(row(Type.Object({ version: Type.Number() })))`
          insert into dataset_schema_versions (dataset_id, version, fields, mapping, ingest_job_id)
          select ${datasetId}, coalesce(max(version), 0) + 1, ${sql.jsonb(fields as never)}, ${sql.jsonb(mapping as never)}, ${jobId}
          from dataset_schema_versions where dataset_id = ${datasetId}
          returning version`);
      });
    },

    async jobGeocodes(jobId) {
      const rows = await pool.any(
        sql.type(
          row(
            Type.Object({
              address: Type.String(),
              longitude: Nullable(Type.Number()),
              latitude: Nullable(Type.Number()),
              confidence: Nullable(Type.Number()),
              failure: Nullable(Type.String()),
            }),
          ),
        )`select address, longitude, latitude, confidence, failure from ingest_job_geocodes where ingest_job_id = ${jobId}`,
      );
      const map = new Map<string, GeocodeOutcome>();
      for (const r of rows) map.set(r.address, outcomeFromRow(r));
      return map;
    },

    async saveJobGeocodes(jobId, results, progress) {
      await pool.transaction(async (tx) => {
        if (results.size) {
          await tx.query(sql.unsafe`
            insert into ingest_job_geocodes (ingest_job_id, address, longitude, latitude, confidence, failure)
            select ${jobId}, * from ${outcomeRows(results)}
            on conflict (ingest_job_id, address) do nothing`);
        }
        await tx.query(sql.unsafe`
          update ingest_job_stages set ${progressSet(progress)}
          where ingest_job_id = ${jobId} and stage = 'geocode-batch'`);
      });
    },
  };
}
