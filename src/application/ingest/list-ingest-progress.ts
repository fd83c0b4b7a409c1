import type { Clock } from '../../ports/clock.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import { ingestProgressOf } from './get-ingest-progress.ts';

// A user's recent ingest files with their progress (the admin's progress page): the same view as
// GET /api/ingest/{ingestId}/progress, one per file, newest first.

export async function listIngestProgress(
  deps: { store: IngestStore; clock: Clock },
  userId: number,
  limit: number,
): Promise<IngestFileProgress[]> {
  const files = await deps.store.filesUploadedBy(userId, limit);
  return Promise.all(
    files.map(async (file) => (await ingestProgressOf(deps, file, 'ingest')) as IngestFileProgress),
  );
}

export type IngestFileProgress = Extract<
  Awaited<ReturnType<typeof ingestProgressOf>>,
  { type: 'ingest-file' }
>;
