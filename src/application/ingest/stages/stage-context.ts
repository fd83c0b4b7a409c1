import { permanent, type RetryPolicy } from '../../../domain/ingest/failures.ts';
import type { TaskStage } from '../../../domain/ingest/stages.ts';
import type { Clock } from '../../../ports/clock.ts';
import type { CountsRefreshQueue } from '../../../ports/ingest/counts-refresh-queue.ts';
import type { Geocoder } from '../../../ports/ingest/geocoder.ts';
import type { IngestQueue } from '../../../ports/ingest/ingest-queue.ts';
import type { SourceFiles } from '../../../ports/ingest/source-files.ts';
import type { IngestJobStore, StoredStage } from '../../../ports/ingest/ingest-job-store.ts';
import type { IngestFile, IngestJob } from '../../../domain/ingest/imports.ts';
import type { IngestStore } from '../../../ports/ingest/ingest-store.ts';
import type { Quotas } from '../../../ports/accounts/quotas.ts';
import type { StageOutputs } from './outputs.ts';

// What every stage of the ingestion workflow (run-ingest-job.ts) is given: the collaborators, the
// job and its file, and the stored records (with outputs) of the stages before it.

export type IngestDeps = {
  store: IngestStore;
  files: SourceFiles;
  geocoder: Geocoder | null;
  queue: IngestQueue;
  clock: Clock;
  retry: RetryPolicy;
  batchSize: number;
  /** Cell text a batch holds at most before it is stored (default BATCH_MAX_BYTES of create-events.ts). */
  batchBytes?: number;
  /** Imports of at least this many rows into an empty dataset defer its read-API counts. */
  deferCountsMinRows: number;
  /** Batches stored at once (each on its own connection) by an import whose counts are deferred. */
  deferredWriters: number;
  countsRefresh: CountsRefreshQueue;
  /** The importer's totalEvents and eventsPerImport, counted as create-events stores its batches. */
  quotas: Pick<Quotas, 'limits'>;
  /**
   * Told when a run picks up a job that an earlier run got partway through (its worker died, an
   * automatic retry, a re-queue), before it goes on: the worker logs where it resumes.
   */
  onResume?: (resumed: ResumedImport) => void;
};

/** Where a run picks up a job an earlier run got partway through. */
export type ResumedImport = {
  jobId: number;
  /** The first stage not completed: where this run starts. */
  stage: TaskStage;
  /** That stage's rows already done (event creation goes on after its last committed batch). */
  rowsProcessed: number;
  rowsTotal: number;
  /** The stages completed (or skipped) before, which this run does not run again. */
  stagesDone: TaskStage[];
  /** Automatic retries of the job so far. */
  retryAttempts: number;
};

export type StageContext = {
  job: IngestJob;
  file: IngestFile;
  records: Map<TaskStage, StoredStage>;
  /**
   * Distinct addresses to geocode, when analyze-duplicates collected them in this run. Not stored
   * (there may be millions): after a restart geocode-batch collects them again from the file,
   * which gives the same set.
   */
  addresses?: Set<string>;
  /** create-events: batches stored at once (more than one only while the dataset's counts are deferred). */
  writers?: number;
  /**
   * Aborted when the run must stop (its process shuts down, or its job's claim went to another
   * worker): the stages stop at their next batch (or row) boundary, so the worker's statements end
   * before the job is handed back (issue 32 §1).
   */
  signal?: AbortSignal;
};

/** The result a stage task returns: its output, or a request for a human decision. */
export type TaskResult<T = unknown> = { output: T; skipped?: boolean } | { needsReview: string[]; output: T };

export type StageTask = (deps: IngestDeps, context: StageContext, record: StoredStage) => Promise<TaskResult>;

export const PROGRESS_EVERY = 10_000;

/** A stage that reports its progress as it goes. */
export type StageProgress = Pick<IngestJobStore, 'reportProgress'>;

/** The stored output of an earlier stage, which the workflow ran (or found completed) before this one. */
export function outputOf<S extends TaskStage>(context: StageContext, stage: S): StageOutputs[S] {
  const record = context.records.get(stage);
  if (!record || record.output === null || record.output === undefined) {
    throw new Error(`stage ${stage} has no stored output`);
  }
  return record.output as StageOutputs[S];
}

export function requireDataset(job: IngestJob): number {
  if (job.datasetId === null)
    throw permanent('MISSING_CONFIG', 'the job has no target dataset (was it deleted?)');
  return job.datasetId;
}
