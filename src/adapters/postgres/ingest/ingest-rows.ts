import { Type } from 'typebox';
import type { StageRecord } from '../../../domain/ingest/progress.ts';
import type { JobConfig } from '../../../domain/ingest/settings.ts';
import type { Stage, TaskStage } from '../../../domain/ingest/stages.ts';
import type { Progress, StoredStage } from '../../../ports/ingest/ingest-job-store.ts';
import type { IngestFile, IngestJob } from '../../../domain/ingest/imports.ts';
import type { ImportVisibility } from '../../../domain/access.ts';
import type { FragmentSqlToken } from 'slonik';
import { Nullable, row, sql } from '../database.ts';

// The rows of the ingestion tables (ingest_files, ingest_jobs, ingest_job_stages) as the ports'
// records, shared by the ingestion adapters of this folder.

export const FileRow = row(
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

export const JobRow = row(
  Type.Object({
    id: Type.Number(),
    ingest_file_id: Type.Number(),
    sheet_index: Type.Number(),
    sheet_name: Nullable(Type.String()),
    dataset_id: Nullable(Type.Number()),
    dataset_name: Nullable(Type.String()),
    dataset_slug: Nullable(Type.String()),
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

export const StageRow = row(
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

export const Id = row(Type.Object({ id: Type.Number() }));
export const Count = row(Type.Object({ count: Type.Number() }));
export const Exists = row(Type.Object({ exists: Type.Boolean() }));

export function toFile(r: Record<string, unknown>): IngestFile {
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

export function toJob(r: Record<string, unknown>): IngestJob & { fileName: string } {
  return {
    id: r.id as number,
    ingestFileId: r.ingest_file_id as number,
    sheetIndex: r.sheet_index as number,
    sheetName: r.sheet_name as string | null,
    datasetId: r.dataset_id as number | null,
    datasetName: r.dataset_name as string | null,
    datasetSlug: r.dataset_slug as string | null,
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

export function toStage(r: Record<string, unknown>): StoredStage {
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

export const jobSelect = sql.fragment`
  select j.id, j.ingest_file_id, j.sheet_index, j.sheet_name, j.dataset_id, d.title as dataset_name, d.slug as dataset_slug,
         j.stage,
         j.config, j.error_log, j.review_reasons, j.approved_at, j.retry_attempts, j.last_retry_at,
         j.next_retry_at, j.failed_at, j.completed_at, j.created_at, f.original_name as file_name
  from ingest_jobs j
  join ingest_files f on f.id = j.ingest_file_id
  left join datasets d on d.id = j.dataset_id`;

export const progressSet = (progress: Progress) => sql.fragment`
  rows_processed = ${progress.rowsProcessed}, progressed_at = now(),
  rows_total = coalesce(${progress.rowsTotal ?? null}::bigint, rows_total),
  batches_total = coalesce(${progress.batchesTotal ?? null}::int, batches_total),
  batches_current = coalesce(${progress.batchesCurrent ?? null}::int, batches_current),
  batch_rows_total = coalesce(${progress.batchRowsTotal ?? null}::int, batch_rows_total),
  batch_rows_processed = coalesce(${progress.batchRowsProcessed ?? null}::int, batch_rows_processed)`;

/**
 * The SQL twin of canAccessImport / canManageSchedule for lists: the uploader (creator) or the
 * catalog's owner, admins all; with a key limited to some catalogs, only rows writing into them.
 */
export function visibleTo(visibility: ImportVisibility, owner: FragmentSqlToken, catalog: FragmentSqlToken) {
  if (visibility.kind === 'all') return sql.fragment`true`;
  const user = visibility.userId;
  const own = sql.fragment`(${owner} = ${user} or ${catalog} in (select id from catalogs where created_by = ${user}))`;
  if (visibility.catalogIds === null) return own;
  return sql.fragment`${own} and ${catalog} = any(${sql.array([...visibility.catalogIds], 'int8')})`;
}
