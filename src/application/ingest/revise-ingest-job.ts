import type { Viewer } from '../../domain/access.ts';
import { DomainError } from '../../domain/errors.ts';
import type { JobConfig } from '../../domain/ingest/settings.ts';
import { type StageNaming, stageName, TASK_STAGES, type TaskStage } from '../../domain/ingest/stages.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { IngestJob } from '../../domain/ingest/imports.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import { accessibleJob, type ImportAccessDeps } from './import-access.ts';

// PATCH /api/ingest-jobs/{id}: approve a job waiting for review (or a schema change that stopped it),
// or adjust its settings. The change queues the ingest-process workflow, which runs the remaining
// stages (create-schema-version, geocode-batch, create-events) and skips completed ones.

type JobRevision = { approved?: boolean; config?: Partial<JobConfig> };

export async function reviseIngestJob(
  deps: { store: IngestStore; queue: IngestQueue; hierarchy: ImportAccessDeps['hierarchy'] },
  viewer: Viewer,
  jobId: number,
  revision: JobRevision,
  naming: StageNaming = 'ingest',
): Promise<{ job: IngestJob; restartedAt: TaskStage | null }> {
  const job = await accessibleJob(deps, viewer, jobId);
  const config = revision.config ? { ...job.config, ...revision.config } : null;
  const approved = revision.approved === true;
  let restart: TaskStage | null = null;
  if (job.stage === 'needs-review' && approved) {
    // Continue after the stage that asked for the review.
    const stages = await deps.store.stages(jobId);
    const done = TASK_STAGES.filter((stage) =>
      stages.some((s) => s.stage === stage && s.status !== 'pending' && s.status !== 'in_progress'),
    );
    const last = done.at(-1) ?? 'needs-review';
    restart = TASK_STAGES[TASK_STAGES.indexOf(last) + 1] ?? 'create-events';
    if (config) restart = 'analyze-duplicates';
  } else if (job.stage === 'failed' && approved && job.errorLog?.code === 'SCHEMA_DRIFT') {
    restart = 'validate-schema';
  } else if ((job.stage === 'failed' || job.stage === 'needs-review') && config) {
    restart = 'analyze-duplicates';
  } else if (approved || config) {
    throw new DomainError(
      'conflict',
      `job ${jobId} is at ${stageName(naming, job.stage)}: only jobs in ${stageName(naming, 'needs-review')} or ${stageName(naming, 'failed')} can be approved or reconfigured`,
      {
        code: 'NOT_REVISABLE',
      },
    );
  }
  await deps.store.revise(jobId, { approved, config });
  if (restart) {
    await deps.store.resetToStage(jobId, restart);
    await deps.queue.enqueueIngestJob(jobId);
    await deps.store.refreshFileStatus(job.ingestFileId);
  }
  const updated = await deps.store.getJob(jobId);
  return { job: updated ?? job, restartedAt: restart };
}
