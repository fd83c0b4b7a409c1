import type { Viewer } from '../../domain/access.ts';
import type { JobConfig } from '../../domain/ingest/settings.ts';
import { restartStage } from '../../domain/ingest/restart-stage.ts';
import type { StageNaming, TaskStage } from '../../domain/ingest/stages.ts';
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
  // Which stages finished decides where an approved review continues.
  const records = job.stage === 'needs-review' ? await deps.store.stages(jobId) : [];
  const restart = restartStage({
    kind: 'revise',
    jobId,
    jobStage: job.stage,
    approved,
    configChanged: config !== null,
    failureCode: job.errorLog?.code,
    records,
    naming,
  });
  await deps.store.revise(jobId, { approved, config });
  if (restart) {
    await deps.store.resetToStage(jobId, restart);
    await deps.queue.enqueueIngestJob(jobId);
    await deps.store.refreshFileStatus(job.ingestFileId);
  }
  const updated = await deps.store.getJob(jobId);
  return { job: updated ?? job, restartedAt: restart };
}
