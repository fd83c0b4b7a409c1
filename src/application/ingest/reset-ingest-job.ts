import { NotFoundError } from '../../domain/errors.ts';
import { legacyStageName, parseResetStage } from '../../domain/ingest/stages.ts';
import type { IngestQueue } from '../../ports/ingest-ports.ts';
import type { IngestStore } from '../../ports/ingest-store.ts';

// POST /api/ingest-jobs/{id}/reset: back to a chosen stage; that stage's and later stages' progress is
// cleared, events already created stay (the unique key keeps them from being created twice).

export async function resetIngestJob(
  deps: { store: IngestStore; queue: IngestQueue },
  jobId: number,
  requested: string,
): Promise<{ success: true; message: string; stage: string }> {
  const stage = parseResetStage(requested);
  const job = await deps.store.getJob(jobId);
  if (!job) throw new NotFoundError(`ingest job ${jobId} does not exist`, { code: 'INGEST_JOB_NOT_FOUND' });
  await deps.store.resetToStage(jobId, stage);
  await deps.queue.enqueueIngestJob(jobId);
  await deps.store.refreshFileStatus(job.ingestFileId);
  const spelled = /[A-Z]/.test(requested) ? legacyStageName(stage) : stage;
  return { success: true, message: `job ${jobId} was reset to ${spelled} and queued`, stage: spelled };
}
