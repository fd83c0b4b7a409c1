import type { ImportVisibility } from '../domain/access.ts';
import type { Location, NewEvent } from '../domain/events.ts';
import type { QuotaLimit } from '../domain/quotas.ts';

/** The event limits of an import's user, resolved when its create-events stage starts (null: unlimited). */
export type EventQuota = { userId: number; totalEvents: QuotaLimit; eventsPerImport: QuotaLimit };
import type { Classification } from '../domain/ingest/failures.ts';
import type { StageRecord } from '../domain/ingest/progress.ts';
import type { DuplicateHandling } from '../domain/ingest/rows.ts';
import type { FieldMapping, FieldSchema } from '../domain/ingest/schema.ts';
import type { IngestSettings, JobConfig } from '../domain/ingest/settings.ts';
import type { Stage, StageStatus, TaskStage } from '../domain/ingest/stages.ts';

export type FileFormat = 'csv' | 'xlsx' | 'ods';
export type IngestSource = 'upload' | 'scheduled' | 'webhook' | 'scraper';
export type IngestFileStatus = 'pending' | 'processing' | 'needs-review' | 'completed' | 'partial' | 'failed';

export type IngestFile = {
  id: number;
  originalName: string;
  storedPath: string;
  sizeBytes: number;
  mimeType: string | null;
  format: FileFormat;
  source: IngestSource;
  status: IngestFileStatus;
  catalogId: number | null;
  uploadedBy: number | null;
  settings: IngestSettings;
  errorLog: string[];
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
};

/**
 * A failed job: the last failure with its classification. A completed job that skipped invalid rows:
 * lastError says how many, rowErrors lists the first ones.
 */
export type JobErrorLog = {
  lastError: string;
  code?: string | undefined;
  failedStage?: Stage;
  classification?: Classification;
  failedAt?: string;
  recoveryAttempt?: { attempt: number; previousError: string; recoveryStage: string; classification: string };
  rowErrors?: { row: number; field: string; message: string }[];
};

export type IngestJob = {
  id: number;
  ingestFileId: number;
  sheetIndex: number;
  sheetName: string | null;
  datasetId: number | null;
  datasetName: string | null;
  stage: Stage;
  config: JobConfig;
  errorLog: JobErrorLog | null;
  reviewReasons: string[] | null;
  approvedAt: string | null;
  retryAttempts: number;
  lastRetryAt: string | null;
  nextRetryAt: string | null;
  failedAt: string | null;
  completedAt: string | null;
  createdAt: string;
};

export type StoredStage = StageRecord & { counters: Record<string, number>; output: unknown };

export type NewIngestFile = Omit<
  IngestFile,
  'id' | 'status' | 'errorLog' | 'createdAt' | 'updatedAt' | 'completedAt'
>;
export type NewIngestJob = {
  sheetIndex: number;
  sheetName: string | null;
  datasetId: number;
  config: JobConfig;
};

export type Progress = {
  rowsTotal?: number;
  rowsProcessed: number;
  batchesTotal?: number;
  batchesCurrent?: number;
  batchRowsTotal?: number;
  batchRowsProcessed?: number;
};

export type GeocodeOutcome = { location: Location; confidence: number } | { failure: string };

export type SchemaVersion = { version: number; fields: FieldSchema[]; mapping: FieldMapping };

export type FailedJobSummary = IngestJob & { fileName: string };

export interface IngestStore {
  createFile(file: NewIngestFile, jobs: NewIngestJob[]): Promise<{ file: IngestFile; jobs: IngestJob[] }>;
  getFile(id: number): Promise<IngestFile | null>;
  /** A user's most recent ingest files, newest first. */
  filesUploadedBy(userId: number, limit: number): Promise<IngestFile[]>;
  getJob(id: number): Promise<IngestJob | null>;
  jobsOfFile(fileId: number): Promise<IngestJob[]>;
  stages(jobId: number): Promise<StoredStage[]>;
  /** Marks the stage in progress and the job as being at it; returns the record (with counters to resume from). */
  startStage(jobId: number, stage: TaskStage): Promise<StoredStage>;
  reportProgress(jobId: number, stage: TaskStage, progress: Progress): Promise<void>;
  completeStage(
    jobId: number,
    stage: TaskStage,
    status: Extract<StageStatus, 'completed' | 'skipped'>,
    output: unknown,
  ): Promise<void>;
  markNeedsReview(jobId: number, reasons: string[]): Promise<void>;
  markCompleted(jobId: number, warnings: JobErrorLog | null): Promise<void>;
  markFailed(jobId: number, errorLog: JobErrorLog): Promise<void>;
  scheduleRetry(
    jobId: number,
    retry: { attempts: number; nextRetryAt: string; restartStage: TaskStage; errorLog: JobErrorLog },
  ): Promise<void>;
  /** Puts the job back at `stage`, clearing the records of it and every later stage (events stay). */
  resetToStage(jobId: number, stage: TaskStage): Promise<void>;
  /** Records an approval (of drift or a review) and/or new settings for the job. */
  revise(jobId: number, change: { approved: boolean; config: JobConfig | null }): Promise<void>;
  /** Recomputes the file's status from its jobs (the aggregate of all sheets). */
  refreshFileStatus(fileId: number): Promise<IngestFile | null>;
  /** Failed jobs and jobs waiting for a scheduled retry, of the imports the visibility allows. */
  failedJobs(visibility: ImportVisibility): Promise<FailedJobSummary[]>;

  createDataset(
    catalogId: number,
    title: string,
    userId: number | null,
  ): Promise<{ id: number; title: string }>;
  datasetInCatalog(datasetId: number, catalogId: number): Promise<boolean>;
  /**
   * Deletes the dataset when it holds no events and no job other than a failed one writes to it
   * (an import that created it and failed leaves nothing behind); false when it was kept.
   */
  removeEmptyDataset(datasetId: number): Promise<boolean>;
  catalogExists(catalogId: number): Promise<boolean>;
  /** How many of these unique ids the dataset already holds. */
  countExisting(datasetId: number, uniqueIds: string[]): Promise<number>;
  datasetHasEvents(datasetId: number): Promise<boolean>;
  /**
   * Marks an empty dataset's read-API counts pending (a bulk import then stores its events without
   * them); false, and nothing changes, when the dataset holds events. True when already pending.
   */
  deferDatasetCounts(datasetId: number): Promise<boolean>;
  datasetCountsPending(datasetId: number): Promise<boolean>;
  /** Adds a pending dataset's counts and clears the flag; false when it was not pending. */
  refreshDatasetCounts(datasetId: number): Promise<boolean>;
  /** Pending datasets that no import has written to for idleSeconds (a crashed import's). */
  datasetsAwaitingCounts(idleSeconds: number): Promise<number[]>;
  /**
   * Stores a batch of events and the stage's progress and counters in one transaction. The batch
   * continues the stage from `progress.rowsBefore`: it moves the stage's `rows_processed` from there
   * to `rowsProcessed` and adds `delta(stored)` to its counters, in SQL, only if `rows_processed` is
   * still `rowsBefore` (a compare-and-set); when it is not (the batch before did not commit, or
   * another worker moved the stage) nothing is stored and a recoverable failure is thrown, so the
   * stage resumes from its high-water mark. With `order`, the batch is stored at the same time as
   * the one before it, on another connection: once its events are stored it awaits `order.ready`
   * (that batch's commit) before it touches anything the two would both write. Answers what the
   * batch stored and the stage's counters after it. With `quota`, the events the batch created
   * count against the importer's totalEvents and the job's eventsPerImport in the same transaction:
   * a batch that would pass either limit stores nothing and throws the QuotaExceededError of the
   * tighter one (its `limit - used` is how many more events fit).
   */
  commitEventBatch(
    jobId: number,
    datasetId: number,
    events: NewEvent[],
    handling: DuplicateHandling,
    progress: Progress & { rowsBefore: number },
    delta: (stored: { inserted: number; updated: number }) => Record<string, number>,
    order?: { ready: () => Promise<unknown> },
    quota?: EventQuota,
  ): Promise<{ inserted: number; updated: number; counters: Record<string, number> }>;
  latestSchema(datasetId: number): Promise<SchemaVersion | null>;
  createSchemaVersion(
    datasetId: number,
    jobId: number,
    fields: FieldSchema[],
    mapping: FieldMapping,
  ): Promise<number>;
  jobGeocodes(jobId: number): Promise<Map<string, GeocodeOutcome>>;
  saveJobGeocodes(jobId: number, results: Map<string, GeocodeOutcome>, progress: Progress): Promise<void>;
}
