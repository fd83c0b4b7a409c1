import { type RetryPolicy, recommendAction } from '../../domain/ingest/failures.ts';
import { legacyStageName } from '../../domain/ingest/stages.ts';
import type { IngestStore } from '../../ports/ingest-store.ts';

// GET /api/ingest-jobs/failed/recommendations: one entry per failed job, with what to do about it.

export async function recommendIngestRecoveries(deps: { store: IngestStore; retry: RetryPolicy }) {
  const failed = await deps.store.failedJobs();
  return {
    recommendations: failed.map((job) => {
      const log = job.errorLog;
      const classification = log?.classification ?? {
        type: 'permanent' as const,
        retryable: false,
        reason: 'no error recorded',
      };
      return {
        importJobId: job.id,
        importFileName: job.fileName,
        stage: legacyStageName(log?.failedStage ?? 'failed'),
        failedAt: job.failedAt ?? job.createdAt,
        errorClassification: classification,
        recommendedAction: recommendAction({
          classification,
          code: log?.code,
          retryAttempts: job.retryAttempts,
          policy: deps.retry,
        }),
        retryCount: job.retryAttempts,
        ...(job.nextRetryAt ? { nextRetryAt: job.nextRetryAt } : {}),
        details: log ? `${log.lastError}${log.code ? ` (${log.code})` : ''}` : 'no error recorded',
      };
    }),
  };
}
