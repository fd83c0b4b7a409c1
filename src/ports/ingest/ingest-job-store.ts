import type { FileOrigin } from '../../domain/ingest/provenance.ts';
import type { FailedJobSummary, IngestFile, IngestJob, JobErrorLog } from '../../domain/ingest/imports.ts';
import type { ImportVisibility } from '../../domain/access.ts';
import type { StageRecord } from '../../domain/ingest/progress.ts';
import type { JobConfig } from '../../domain/ingest/settings.ts';
import type { StageStatus, TaskStage } from '../../domain/ingest/stages.ts';

// Where ingest files and their jobs are kept (the entities are domain/ingest/imports.ts), and each
// job's stage records: what the workflow has done and where it stands.

export type StoredStage = StageRecord & { counters: Record<string, number>; output: unknown };

export type NewIngestFile = Omit<
  IngestFile,
  'id' | 'status' | 'errorLog' | 'createdAt' | 'updatedAt' | 'completedAt'
> & { origin?: FileOrigin | undefined };
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

export interface IngestJobStore {
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
}
