import { requireAdmin, type Viewer } from '../../domain/access.ts';
import { DomainError } from '../../domain/errors.ts';
import { restartStage } from '../../domain/ingest/restart-stage.ts';
import { stageName, type TaskStage } from '../../domain/ingest/stages.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { FailedJobSummary } from '../../domain/ingest/imports.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import { accessibleJob, type ImportAccessDeps } from './import-access.ts';

// The spec's manual re-queue of a FAILED job through the admin interface: once an admin has fixed
// the cause, the job resumes at the task that failed (completed tasks are skipped by the workflow),
// at once and whatever the failure's classification. A user's own retry (retry-ingest-job.ts) is
// refused for failures that need a user action or are permanent; this is the admin's override.

export async function requeueFailedJob(
  deps: { store: IngestStore; queue: IngestQueue; hierarchy: ImportAccessDeps['hierarchy'] },
  viewer: Viewer,
  jobId: number,
): Promise<{ stage: TaskStage; message: string }> {
  requireAdmin(viewer);
  const job = await accessibleJob(deps, viewer, jobId);
  if (job.stage !== 'failed') {
    throw new DomainError('conflict', `job ${jobId} has not failed (stage ${job.stage})`, {
      code: 'NOT_FAILED',
    });
  }
  const resume = restartStage({ kind: 'requeue', failedStage: job.errorLog?.failedStage });
  await deps.store.resetToStage(jobId, resume);
  await deps.queue.enqueueIngestJob(jobId);
  await deps.store.refreshFileStatus(job.ingestFileId);
  return { stage: resume, message: `job ${jobId} re-queued at ${stageName('ingest', resume)}` };
}

/** Every FAILED job, whoever's (the admin's Imports page lists them with a re-queue button). */
export async function failedJobsToRequeue(
  deps: { store: IngestStore },
  viewer: Viewer,
  limit = 100,
): Promise<FailedJobSummary[]> {
  requireAdmin(viewer);
  const failed = await deps.store.failedJobs({ kind: 'all' });
  return failed.filter((job) => job.stage === 'failed').slice(0, limit);
}
