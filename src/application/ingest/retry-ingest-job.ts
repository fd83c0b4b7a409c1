import { NotFoundError } from '../../domain/errors.ts';
import { type RetryPolicy, retryDelayMs } from '../../domain/ingest/failures.ts';
import { recoveryStage } from '../../domain/ingest/stages.ts';
import { QuotaExceededError } from '../../domain/quotas.ts';
import type { Clock, IngestQueue } from '../../ports/ingest-ports.ts';
import type { IngestStore } from '../../ports/ingest-store.ts';
import type { Quotas } from '../../ports/quotas.ts';

// POST /api/ingest-jobs/{id}/retry: a failed job restarts at its recovery stage (spec: Recovery stage
// selection), after the backoff delay of its next attempt, when its failure is retryable and the
// user's import quota allows another job.

export type RetryResult =
  | { success: true; action: 'retry_scheduled'; message: string; retryScheduled: true; nextRetryAt: string }
  | { success: false; action: 'quota_exceeded'; error: string; statusCode: 403 }
  | { success: false; action: 'not_retryable'; error: string; statusCode: 400 };

export async function retryIngestJob(
  deps: { store: IngestStore; queue: IngestQueue; quotas: Quotas; clock: Clock; retry: RetryPolicy },
  jobId: number,
  userId: number | null,
): Promise<RetryResult> {
  const job = await deps.store.getJob(jobId);
  if (!job) throw new NotFoundError(`ingest job ${jobId} does not exist`, { code: 'INGEST_JOB_NOT_FOUND' });
  if (job.stage !== 'failed' || !job.errorLog) {
    return {
      success: false,
      action: 'not_retryable',
      error: `job ${jobId} has not failed (stage ${job.stage})`,
      statusCode: 400,
    };
  }
  const { classification, failedStage } = job.errorLog;
  if (!classification || !failedStage) {
    return {
      success: false,
      action: 'not_retryable',
      error: `job ${jobId} has no recorded failure to retry`,
      statusCode: 400,
    };
  }
  if (!classification.retryable) {
    return {
      success: false,
      action: 'not_retryable',
      error: `the failure is ${classification.type} and needs a manual fix: ${classification.reason}`,
      statusCode: 400,
    };
  }
  try {
    if (userId !== null) await deps.quotas.take(userId, [{ quota: 'importJobsPerDay', amount: 1 }]);
  } catch (error) {
    if (!(error instanceof QuotaExceededError)) throw error;
    return {
      success: false,
      action: 'quota_exceeded',
      error: `daily import quota reached (limit ${error.limit}); retry after ${error.resetsAt?.toISOString() ?? 'the reset'}`,
      statusCode: 403,
    };
  }
  const restart = recoveryStage(failedStage);
  const attempt = job.retryAttempts + 1;
  const nextRetryAt = new Date(deps.clock.now().getTime() + retryDelayMs(deps.retry, attempt));
  await deps.store.resetToStage(jobId, restart);
  await deps.store.scheduleRetry(jobId, {
    attempts: attempt,
    nextRetryAt: nextRetryAt.toISOString(),
    restartStage: restart,
    errorLog: {
      ...job.errorLog,
      recoveryAttempt: {
        attempt,
        previousError: job.errorLog.lastError,
        recoveryStage: restart,
        classification: classification.type,
      },
    },
  });
  await deps.queue.enqueueIngestJob(jobId, { startAfter: nextRetryAt });
  await deps.store.refreshFileStatus(job.ingestFileId);
  return {
    success: true,
    action: 'retry_scheduled',
    message: `job ${jobId} restarts at ${restart} (attempt ${attempt})`,
    retryScheduled: true,
    nextRetryAt: nextRetryAt.toISOString(),
  };
}
