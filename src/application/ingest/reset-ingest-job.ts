import type { Viewer } from '../../domain/access.ts';
import { restartStage } from '../../domain/ingest/restart-stage.ts';
import { type StageNaming, stageName } from '../../domain/ingest/stages.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import { accessibleJob, type ImportAccessDeps } from './import-access.ts';

// POST /api/ingest-jobs/{id}/reset: back to a chosen stage; that stage's and later stages' progress is
// cleared, events already created stay (the unique key keeps them from being created twice).

export async function resetIngestJob(
  deps: { store: IngestStore; queue: IngestQueue; hierarchy: ImportAccessDeps['hierarchy'] },
  viewer: Viewer,
  jobId: number,
  requested: string,
  naming: StageNaming = 'ingest',
): Promise<{ success: true; message: string; stage: string }> {
  // Who is asking comes first: a stranger learns nothing, not even whether the stage was valid.
  const job = await accessibleJob(deps, viewer, jobId);
  const stage = restartStage({ kind: 'reset', requested, naming });
  await deps.store.resetToStage(jobId, stage);
  await deps.queue.enqueueIngestJob(jobId);
  await deps.store.refreshFileStatus(job.ingestFileId);
  const spelled = stageName(naming, stage);
  return { success: true, message: `job ${jobId} was reset to ${spelled} and queued`, stage: spelled };
}
