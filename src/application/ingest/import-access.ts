import {
  type CatalogAccessFacts,
  canAccessImport,
  canReadCatalog,
  canWriteCatalog,
  ForbiddenError,
  requireViewer,
  type Viewer,
} from '../../domain/access.ts';
import { NotFoundError } from '../../domain/errors.ts';
import type { CollectionRepository } from '../../ports/collections/collection-repository.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';

// Who may touch an import (an ingest file, its jobs, their progress and recovery), asked by every
// ingest use case through the rules of domain/access.ts. Anonymous callers get 401 before anything
// is looked up; an import that is not the caller's answers exactly like one that does not exist.

export type ImportAccessDeps = {
  store: Pick<IngestStore, 'getFile' | 'getJob'>;
  /** The catalog > dataset facts the access rules need (the collections' repository). */
  hierarchy: Pick<CollectionRepository, 'hierarchy'>;
};

const fileNotFound = (id: number) =>
  new NotFoundError(`ingest file ${id} does not exist`, { code: 'INGEST_FILE_NOT_FOUND' });
const jobNotFound = (id: number) =>
  new NotFoundError(`ingest job ${id} does not exist`, { code: 'INGEST_JOB_NOT_FOUND' });

async function catalogFacts(deps: ImportAccessDeps, catalogId: number | null) {
  if (catalogId === null) return null;
  return (await deps.hierarchy.hierarchy('catalogs', catalogId))?.catalog ?? null;
}

async function mayAccess(deps: ImportAccessDeps, viewer: Viewer, file: IngestFile): Promise<boolean> {
  return canAccessImport(viewer, {
    uploadedBy: file.uploadedBy,
    catalog: await catalogFacts(deps, file.catalogId),
  });
}

/** The ingest file, when the caller may see it: 401 anonymous, 404 missing or not theirs. */
export async function accessibleFile(
  deps: ImportAccessDeps,
  viewer: Viewer,
  fileId: number,
): Promise<IngestFile> {
  requireViewer(viewer);
  const file = await deps.store.getFile(fileId);
  if (!file || !(await mayAccess(deps, viewer, file))) throw fileNotFound(fileId);
  return file;
}

/** The ingest job, when the caller may see (and so recover) its file: 401 anonymous, 404 otherwise. */
export async function accessibleJob(
  deps: ImportAccessDeps,
  viewer: Viewer,
  jobId: number,
): Promise<IngestJob> {
  requireViewer(viewer);
  const job = await deps.store.getJob(jobId);
  const file = job ? await deps.store.getFile(job.ingestFileId) : null;
  if (!job || !file || !(await mayAccess(deps, viewer, file))) throw jobNotFound(jobId);
  return job;
}

/**
 * Where an upload or a scheduled import writes: the caller needs write access to the catalog (its
 * owner or an admin), the rule `POST /api/datasets` applies; write access to a catalog covers its
 * datasets (canWriteDataset), and a dataset must be one of the catalog's (checked where the target
 * is resolved). A catalog the caller cannot even read is "not found" (404); one they can read but
 * not change is 403.
 */
export async function authorizeImportTarget(
  deps: Pick<ImportAccessDeps, 'hierarchy'>,
  viewer: Viewer,
  catalogId: number,
): Promise<{ userId: number; catalog: CatalogAccessFacts }> {
  const user = requireViewer(viewer);
  const facts = await deps.hierarchy.hierarchy('catalogs', catalogId);
  if (!facts || !canReadCatalog(viewer, facts.catalog)) {
    throw new NotFoundError(`catalog ${catalogId} does not exist`, { code: 'CATALOG_NOT_FOUND' });
  }
  if (!canWriteCatalog(viewer, facts.catalog)) {
    throw new ForbiddenError(`You cannot add to catalog ${catalogId}`);
  }
  return { userId: user.id, catalog: facts.catalog };
}
