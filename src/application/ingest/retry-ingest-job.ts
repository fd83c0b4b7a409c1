import type { Viewer } from '../../domain/access.ts';
import { type RetryPolicy, retryDelayMs, retryRefusal } from '../../domain/ingest/failures.ts';
import { restartStage } from '../../domain/ingest/restart-stage.ts';
import { type StageNaming, stageName } from '../../domain/ingest/stages.ts';
import { QuotaExceededError } from '../../domain/accounts/quotas.ts';
import type { Clock } from '../../ports/clock.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import { accessibleJob, type ImportAccessDeps } from './import-access.ts';

// POST /api/ingest-jobs/{id}/retry: a failed job restarts at its recovery stage (spec: Recovery stage
// selection), after the backoff delay of its next attempt, when its failure is retryable and the
// user's import quota allows another job. Only who may see the job may retry it (404 otherwise), and
// a failure that needs a user action is refused (400 not_retryable) before any quota is taken.

type RetryResult =
  | { success: true; action: 'retry_scheduled'; message: string; retryScheduled: true; nextRetryAt: string }
  | { success: false; action: 'quota_exceeded'; error: string; statusCode: 403 }
  | { success: false; action: 'not_retryable'; error: string; statusCode: 400 };

export async function retryIngestJob(
  deps: {
    store: IngestStore;
    queue: IngestQueue;
    quotas: Quotas;
    clock: Clock;
    retry: RetryPolicy;
    hierarchy: ImportAccessDeps['hierarchy'];
  },
  viewer: Viewer,
  jobId: number,
  naming: StageNaming = 'ingest',
): Promise<RetryResult> {
  const job = await accessibleJob(deps, viewer, jobId);
  const userId = viewer?.id ?? null;
  if (job.stage !== 'failed' || !job.errorLog) {
    return {
      success: false,
      action: 'not_retryable',
      error: `job ${jobId} has not failed (stage ${stageName(naming, job.stage)})`,
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
  const refusal = retryRefusal({ classification, code: job.errorLog.code });
  if (refusal) return { success: false, action: 'not_retryable', error: refusal, statusCode: 400 };
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
  const restart = restartStage({ kind: 'retry', failedStage });
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
    message: `job ${jobId} restarts at ${stageName(naming, restart)} (attempt ${attempt})`,
    retryScheduled: true,
    nextRetryAt: nextRetryAt.toISOString(),
  };
}
