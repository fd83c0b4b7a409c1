import { importVisibility, requireViewer, type Viewer } from '../../domain/access.ts';
import { type RetryPolicy, recommendAction, retryRefusal } from '../../domain/ingest/failures.ts';
import { type StageNaming, stageName } from '../../domain/ingest/stages.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';

// GET /api/ingest-jobs/failed/recommendations: one entry per failed job (and per job waiting for its
// scheduled retry), with what to do about it. Only the imports the caller may see (admins: all);
// stage names as the route's naming spells them.

export async function recommendIngestRecoveries(
  deps: { store: IngestStore; retry: RetryPolicy },
  viewer: Viewer,
  naming: StageNaming = 'ingest',
) {
  const failed = await deps.store.failedJobs(importVisibility(requireViewer(viewer)));
  return {
    recommendations: failed.map((job) => {
      const log = job.errorLog;
      const classification = log?.classification ?? {
        type: 'permanent' as const,
        retryable: false,
        reason: 'no error recorded',
      };
      const waitingForRetry = job.stage !== 'failed' && job.nextRetryAt !== null;
      return {
        importJobId: job.id,
        importFileName: job.fileName,
        stage: stageName(naming, log?.failedStage ?? job.stage),
        failedAt: job.failedAt ?? log?.failedAt ?? job.createdAt,
        // Whether POST .../retry would be taken, by the rule the retry itself applies; a job
        // waiting for its scheduled retry is being retried already.
        errorClassification: {
          ...classification,
          retryable: waitingForRetry
            ? classification.retryable
            : retryRefusal({ classification, code: log?.code }) === null,
        },
        recommendedAction: recommendAction({
          classification,
          code: log?.code,
          retryAttempts: job.retryAttempts,
          policy: deps.retry,
          waitingForRetry,
        }),
        retryCount: job.retryAttempts,
        ...(job.nextRetryAt ? { nextRetryAt: job.nextRetryAt } : {}),
        details: log ? `${log.lastError}${log.code ? ` (${log.code})` : ''}` : 'no error recorded',
      };
    }),
  };
}
