import type { Viewer } from '../../domain/access.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import { type CreateIngestFileInput, createIngestFile } from './create-ingest-file.ts';
import { authorizeImportTarget, type ImportAccessDeps } from './import-access.ts';

// POST /api/ingest-files: a logged-in caller with write access to the target catalog records an
// upload (the rule POST /api/datasets applies: 404 for a catalog they cannot see, 403 for one they
// cannot change), checked before any quota is taken; the uploader is the caller.

export async function uploadIngestFile(
  deps: {
    store: IngestStore;
    queue: IngestQueue;
    quotas: Quotas;
    hierarchy: ImportAccessDeps['hierarchy'];
  },
  viewer: Viewer,
  input: Omit<CreateIngestFileInput, 'userId'>,
): Promise<{ file: IngestFile; jobs: IngestJob[] }> {
  const { userId } = await authorizeImportTarget(deps, viewer, input.catalogId);
  return createIngestFile(deps, { ...input, userId });
}
