import {
  canRetry,
  classifyFailure,
  type FailureFacts,
  IngestFailure,
  retryDelayMs,
} from '../../domain/ingest/failures.ts';
import { restartStage } from '../../domain/ingest/restart-stage.ts';
import { TASK_STAGES, type TaskStage } from '../../domain/ingest/stages.ts';
import type { IngestJob, JobErrorLog } from '../../domain/ingest/imports.ts';
import { discardCreatedDataset } from './job-rows.ts';
import { analyzeDuplicates } from './stages/analyze-duplicates.ts';
import { createEventsDeferringCounts } from './stages/create-events.ts';
import { createSchemaVersion } from './stages/create-schema-version.ts';
import { detectSchemaStage } from './stages/detect-schema.ts';
import { geocodeBatch } from './stages/geocode-batch.ts';
import { needsReview } from './stages/needs-review.ts';
import type { AnalyzeOutput, ValidateOutput } from './stages/outputs.ts';
import type { IngestDeps, ResumedImport, StageContext, StageTask } from './stages/stage-context.ts';
import { validateSchema } from './stages/validate-schema.ts';

export type { IngestDeps } from './stages/stage-context.ts';

// The staged ingestion workflow for one job (one dataset or sheet). Each stage (one file each under
// stages/) is a task whose output is stored: a restarted run returns the stored output of completed
// tasks instead of running them again, and starts the first unfinished task from its beginning
// (event creation continues after the last batch it committed, because each batch commits with its
// progress). Stages hand their findings forward through these outputs (stages/outputs.ts): the
// analyze-duplicates pass detects the schema, checks every row and collects the addresses, and the
// stages after it use what it found instead of reading the file again.

const TASKS: Record<TaskStage, StageTask> = {
  'analyze-duplicates': analyzeDuplicates,
  'detect-schema': detectSchemaStage,
  'validate-schema': validateSchema,
  'needs-review': needsReview,
  'create-schema-version': createSchemaVersion,
  'geocode-batch': geocodeBatch,
  'create-events': createEventsDeferringCounts,
};

type RunOutcome = 'completed' | 'needs-review' | 'retry-scheduled' | 'failed' | 'nothing-to-do';

/**
 * The run stopped at its `signal` (issue 32 §1): it wrote nothing after the stop, left the job as
 * it was (its stage in progress) and is to be run again, like a run whose worker died.
 */
class IngestRunStopped extends Error {
  constructor(jobId: number, cause: unknown) {
    super(`ingest job ${jobId}: stopped before it finished; it resumes where its last batch committed`, {
      cause,
    });
    this.name = 'IngestRunStopped';
  }
}

/**
 * Runs (or resumes) one ingest job. `signal`: aborted when the run must stop (its process shuts
 * down, its job's claim is gone); the stages stop at their next boundary and the run throws
 * IngestRunStopped without recording a failure.
 */
export async function runIngestJob(
  deps: IngestDeps,
  jobId: number,
  signal?: AbortSignal,
): Promise<RunOutcome> {
  const job = await deps.store.getJob(jobId);
  if (!job || job.stage === 'completed' || job.stage === 'failed' || job.stage === 'needs-review') {
    return 'nothing-to-do';
  }
  const file = await deps.store.getFile(job.ingestFileId);
  if (!file) return 'nothing-to-do';
  const records = new Map((await deps.store.stages(jobId)).map((record) => [record.stage, record]));
  const resumed = resumePoint(job, records);
  if (resumed) deps.onResume?.(resumed);
  const context: StageContext = { job, file, records, ...(signal ? { signal } : {}) };
  let current: TaskStage = 'analyze-duplicates';
  try {
    for (const stage of TASK_STAGES) {
      signal?.throwIfAborted();
      current = stage;
      const record = records.get(stage);
      if (record && (record.status === 'completed' || record.status === 'skipped')) continue;
      const started = await deps.store.startStage(jobId, stage);
      records.set(stage, started);
      const result = await TASKS[stage](deps, context, started);
      if ('needsReview' in result) {
        await deps.store.completeStage(jobId, stage, 'completed', result.output);
        await deps.store.markNeedsReview(jobId, result.needsReview);
        await deps.store.refreshFileStatus(file.id);
        return 'needs-review';
      }
      await deps.store.completeStage(jobId, stage, result.skipped ? 'skipped' : 'completed', result.output);
      records.set(stage, {
        ...started,
        status: result.skipped ? 'skipped' : 'completed',
        output: result.output,
      });
    }
    await deps.store.markCompleted(jobId, completionWarnings(context));
    await deps.store.refreshFileStatus(file.id);
    return 'completed';
  } catch (error) {
    // Stopped: the failure is the stop's own (a cancelled statement, the abort); nothing is recorded.
    if (signal?.aborted) throw new IngestRunStopped(jobId, error);
    const outcome = await handleFailure(deps, job, current, error);
    if (outcome === 'failed' && !classifyFailure(failureFacts(error)).retryable)
      await discardCreatedDataset(deps, job, file);
    await deps.store.refreshFileStatus(file.id);
    return outcome;
  }
}

/** Where this run starts when earlier runs left stage records (null for a job's first run). */
function resumePoint(job: IngestJob, records: StageContext['records']): ResumedImport | null {
  if (records.size === 0) return null;
  const finished = (stage: TaskStage) => ['completed', 'skipped'].includes(records.get(stage)?.status ?? '');
  const stage = TASK_STAGES.find((each) => !finished(each));
  if (!stage) return null;
  const record = records.get(stage);
  return {
    jobId: job.id,
    stage,
    rowsProcessed: record?.rowsProcessed ?? 0,
    rowsTotal: record?.rowsTotal ?? 0,
    stagesDone: TASK_STAGES.filter(finished),
    retryAttempts: job.retryAttempts,
  };
}

/** What the classification needs to know, lifted from whatever was thrown. */
export function failureFacts(error: unknown): FailureFacts {
  if (error instanceof IngestFailure)
    return { message: error.message, code: error.code, declared: error.classification };
  const err = error as { message?: unknown; code?: unknown; status?: unknown; cause?: { code?: unknown } };
  const code =
    typeof err?.code === 'string'
      ? err.code
      : typeof err?.cause?.code === 'string'
        ? err.cause.code
        : undefined;
  return {
    message: typeof err?.message === 'string' ? err.message : String(error),
    code,
    httpStatus: typeof err?.status === 'number' ? err.status : undefined,
  };
}

async function handleFailure(
  deps: IngestDeps,
  job: IngestJob,
  stage: TaskStage,
  error: unknown,
): Promise<RunOutcome> {
  const facts = failureFacts(error);
  const classification = classifyFailure(facts);
  const now = deps.clock.now();
  const errorLog: JobErrorLog = {
    lastError: facts.message,
    ...(facts.code ? { code: facts.code } : {}),
    failedStage: stage,
    classification,
    failedAt: now.toISOString(),
  };
  if (classification.type === 'recoverable' && canRetry(deps.retry, job.retryAttempts)) {
    const attempt = job.retryAttempts + 1;
    const nextRetryAt = new Date(now.getTime() + retryDelayMs(deps.retry, attempt));
    const restart = restartStage({ kind: 'automatic-retry', failedStage: stage });
    await deps.store.scheduleRetry(job.id, {
      attempts: attempt,
      nextRetryAt: nextRetryAt.toISOString(),
      restartStage: restart,
      errorLog: {
        ...errorLog,
        recoveryAttempt: {
          attempt,
          previousError: facts.message,
          recoveryStage: restart,
          classification: classification.type,
        },
      },
    });
    await deps.queue.enqueueIngestJob(job.id, { startAfter: nextRetryAt });
    return 'retry-scheduled';
  }
  await deps.store.markFailed(job.id, errorLog);
  return 'failed';
}

/** A completed job that skipped invalid rows says so in its errorLog. */
function completionWarnings(context: StageContext): JobErrorLog | null {
  const validated = context.records.get('validate-schema')?.output as ValidateOutput | undefined;
  const analyzed = context.records.get('analyze-duplicates')?.output as AnalyzeOutput | undefined;
  if (!validated || validated.invalidRows === 0) return null;
  const first = validated.rowErrors[0];
  return {
    lastError:
      `${validated.invalidRows} of ${analyzed?.rowsTotal ?? validated.invalidRows + validated.validRows} rows were invalid and not imported` +
      (first ? `; row ${first.row}: ${first.field} ${first.message}` : ''),
    code: 'INVALID_ROWS',
    rowErrors: validated.rowErrors,
  };
}
