import { stagesFrom } from '../../../domain/ingest/stages.ts';
import type { IngestJobStore } from '../../../ports/ingest/ingest-job-store.ts';
import { type DatabasePool, sql } from '../database.ts';
import { recordScheduledImportHealth } from '../source-health.ts';
import {
  visibleTo,
  FileRow,
  Id,
  JobRow,
  jobSelect,
  progressSet,
  StageRow,
  toFile,
  toJob,
  toStage,
} from './ingest-rows.ts';

// Ingest files, their jobs and the jobs' stage records in PostgreSQL.

export function postgresIngestJobStore(pool: DatabasePool): IngestJobStore {
  const getJob = async (id: number) => {
    const found = await pool.maybeOne(sql.type(JobRow)`${jobSelect} where j.id = ${id}`);
    return found ? toJob(found) : null;
  };

  return {
    async createFile(file, jobs) {
      return pool.transaction(async (tx) => {
        const created = await tx.one(sql.type(FileRow)`
          insert into ingest_files (original_name, stored_path, size_bytes, mime_type, format, source, catalog_id,
                                    uploaded_by, settings, sha256, source_url, fetched_at, etag, last_modified)
          values (${file.originalName}, ${file.storedPath}, ${file.sizeBytes}, ${file.mimeType}, ${file.format},
                  ${file.source}, ${file.catalogId}, ${file.uploadedBy}, ${sql.jsonb(file.settings as never)},
                  ${file.origin?.sha256 ?? null}, ${file.origin?.url?.address ?? null},
                  ${file.origin?.url?.fetchedAt ?? null}, ${file.origin?.url?.etag ?? null},
                  ${file.origin?.url?.lastModified ?? null})
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
      await pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`
          update ingest_jobs
          set stage = 'completed', completed_at = now(), next_retry_at = null, updated_at = now(),
              error_log = ${warnings ? sql.jsonb(warnings as never) : null}::jsonb
          where id = ${jobId}`);
        // A scheduled run's import: its source's health (no events created is an empty run).
        await recordScheduledImportHealth(tx, jobId, 'completed');
      });
    },

    async markFailed(jobId, errorLog) {
      await pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`
          update ingest_jobs
          set stage = 'failed', error_log = ${sql.jsonb(errorLog as never)}, failed_at = now(), next_retry_at = null,
              updated_at = now()
          where id = ${jobId}`);
        await recordScheduledImportHealth(tx, jobId, 'failed');
      });
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
      const visible = visibleTo(visibility, sql.fragment`f.uploaded_by`, sql.fragment`f.catalog_id`);
      const rows = await pool.any(sql.type(JobRow)`
        ${jobSelect}
        where (j.stage = 'failed' or j.next_retry_at is not null) and ${visible}
        order by j.failed_at desc nulls first, j.id`);
      return rows.map(toJob);
    },
  };
}
