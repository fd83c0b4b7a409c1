import { DomainError, NotFoundError, ValidationError } from '../../domain/errors.ts';
import { datasetTitleFor } from '../../domain/ingest/settings.ts';
import type { IngestQueue, QuotaGate } from '../../ports/ingest-ports.ts';
import type { IngestFile, IngestJob, IngestStore, NewIngestJob } from '../../ports/ingest-store.ts';

// Records an uploaded (or fetched) file, one ingest job per sheet, and queues each job's workflow.

export type CreateIngestFileInput = Pick<
  IngestFile,
  'originalName' | 'storedPath' | 'sizeBytes' | 'mimeType' | 'format' | 'source' | 'settings'
> & {
  catalogId: number;
  userId: number | null;
  /** Sheet names of a workbook; a CSV has one unnamed sheet. */
  sheets: (string | null)[];
};

export async function createIngestFile(
  deps: { store: IngestStore; queue: IngestQueue; quotas: QuotaGate },
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
  const uploads = input.source === 'upload' ? 'fileUploadsPerDay' : 'urlFetchesPerDay';
  for (const [quota, amount] of [
    [uploads, 1],
    ['importJobsPerDay', input.sheets.length],
  ] as const) {
    const decision = await deps.quotas.consume(input.userId, quota, amount);
    if (!decision.ok) {
      throw new DomainError('quota_exceeded', `${quota} quota reached (limit ${decision.limit})`, {
        code: 'QUOTA_EXCEEDED',
      });
    }
  }
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
    },
    jobs,
  );
  for (const job of created.jobs) await deps.queue.enqueueIngestJob(job.id);
  return created;
}
