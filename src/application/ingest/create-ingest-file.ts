import { NotFoundError, ValidationError } from '../../domain/errors.ts';
import { datasetTitleFor } from '../../domain/ingest/settings.ts';
import type { QuotaAmount } from '../../domain/accounts/quotas.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { NewIngestJob } from '../../ports/ingest/ingest-job-store.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import type { FileOrigin } from '../../domain/ingest/provenance.ts';

// Records an uploaded (or fetched) file, one ingest job per sheet, and queues each job's workflow.

export type CreateIngestFileInput = Pick<
  IngestFile,
  'originalName' | 'storedPath' | 'sizeBytes' | 'mimeType' | 'format' | 'source' | 'settings'
> & {
  catalogId: number;
  userId: number | null;
  /** Sheet names of a workbook; a CSV has one unnamed sheet. */
  sheets: (string | null)[];
  /** The caller took importQuotaAmounts already (a scheduled fetch takes them before it fetches). */
  quotaTaken?: boolean;
  /** A wizard draft's start: its fileUploadsPerDay was taken when the draft was stored. */
  uploadCounted?: boolean;
  /** What the file was made from (its SHA-256, a URL import's URL): its events' provenance. */
  origin?: FileOrigin | undefined;
};

/**
 * What recording a file takes from its user's quotas: an upload takes one of fileUploadsPerDay, a
 * scheduled or webhook fetch one of urlFetchesPerDay, and every file one importJobsPerDay per
 * sheet (a scraper's auto-import counts its jobs; its run was counted by scraperRunsPerDay).
 */
export function importQuotaAmounts(
  source: IngestFile['source'],
  sheets: number,
  uploadCounted = false,
): QuotaAmount[] {
  const amounts: QuotaAmount[] = [{ quota: 'importJobsPerDay', amount: sheets }];
  if (source === 'upload' && !uploadCounted) amounts.push({ quota: 'fileUploadsPerDay', amount: 1 });
  if (source === 'scheduled' || source === 'webhook') amounts.push({ quota: 'urlFetchesPerDay', amount: 1 });
  return amounts;
}

export async function createIngestFile(
  deps: { store: IngestStore; queue: IngestQueue; quotas: Quotas },
  input: CreateIngestFileInput,
): Promise<{ file: IngestFile; jobs: IngestJob[] }> {
  if (!(await deps.store.catalogExists(input.catalogId))) {
    throw new NotFoundError(`catalog ${input.catalogId} does not exist`, { code: 'CATALOG_NOT_FOUND' });
  }
  for (const [index, target] of Object.entries(input.settings.targets)) {
    if ('datasetId' in target && !(await deps.store.datasetInCatalog(target.datasetId, input.catalogId))) {
      throw new ValidationError(
        `dataset ${target.datasetId} (sheet ${index}) is not in catalog ${input.catalogId}`,
        {
          field: 'dataset',
        },
      );
    }
  }
  // All or nothing: an upload refused by importJobsPerDay keeps its fileUploadsPerDay unit.
  const taken =
    input.userId !== null && !input.quotaTaken
      ? importQuotaAmounts(input.source, input.sheets.length, input.uploadCounted)
      : [];
  if (input.userId !== null && taken.length) await deps.quotas.take(input.userId, taken);
  try {
    return await createDatasetsAndRecord(deps, input);
  } catch (error) {
    // A file that was not recorded used nothing.
    if (input.userId !== null && taken.length) await deps.quotas.give(input.userId, taken);
    throw error;
  }
}

/** Creates the sheets' new datasets and records the file with its jobs; a failure removes those datasets. */
async function createDatasetsAndRecord(
  deps: { store: IngestStore; queue: IngestQueue },
  input: CreateIngestFileInput,
): Promise<{ file: IngestFile; jobs: IngestJob[] }> {
  const jobs: NewIngestJob[] = [];
  const createdDatasets: number[] = [];
  try {
    for (const [sheetIndex, sheetName] of input.sheets.entries()) {
      const target = input.settings.targets[sheetIndex] ?? { newDataset: { title: '' } };
      let datasetId: number;
      if ('datasetId' in target) datasetId = target.datasetId;
      else {
        datasetId = (
          await deps.store.createDataset(
            input.catalogId,
            target.newDataset.title || datasetTitleFor(input.originalName, sheetName),
            input.userId,
          )
        ).id;
        createdDatasets.push(datasetId);
      }
      const { targets: _targets, ...config } = input.settings;
      jobs.push({ sheetIndex, sheetName, datasetId, config });
    }
    return await recordFile(deps, input, jobs);
  } catch (error) {
    // An upload that fails here leaves no empty dataset behind.
    for (const id of createdDatasets) await deps.store.removeEmptyDataset(id).catch(() => false);
    throw error;
  }
}

async function recordFile(
  deps: { store: IngestStore; queue: IngestQueue },
  input: CreateIngestFileInput,
  jobs: NewIngestJob[],
): Promise<{ file: IngestFile; jobs: IngestJob[] }> {
  const created = await deps.store.createFile(
    {
      originalName: input.originalName,
      storedPath: input.storedPath,
      sizeBytes: input.sizeBytes,
      mimeType: input.mimeType,
      format: input.format,
      source: input.source,
      catalogId: input.catalogId,
      uploadedBy: input.userId,
      settings: input.settings,
      origin: input.origin,
    },
    jobs,
  );
  for (const job of created.jobs) await deps.queue.enqueueIngestJob(job.id);
  return created;
}
