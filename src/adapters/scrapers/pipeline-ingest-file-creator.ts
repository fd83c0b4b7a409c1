import { randomUUID } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { createIngestFile } from '../../application/ingest/create-ingest-file.ts';
import { NotFoundError } from '../../domain/errors.ts';
import { DEFAULT_JOB_CONFIG } from '../../domain/ingest/settings.ts';
import type { IngestQueue } from '../../ports/ingest-queue.ts';
import type { IngestStore } from '../../ports/ingest-store.ts';
import type { Quotas } from '../../ports/quotas.ts';
import type { IngestFileCreator } from '../../ports/scraper-collaborators.ts';
import { type DatabasePool, row, sql } from '../postgres/database.ts';

// Auto-import of a scraper's CSV: the bytes are written under the ingestion upload root and handed
// to ingestion's create-ingest-file use case (source `scraper`), so the run's output goes through
// the unchanged staged pipeline into the scraper's target dataset.

export type PipelineIngestDeps = {
  pool: DatabasePool;
  store: IngestStore;
  queue: IngestQueue;
  quotas: Quotas;
  /** The ingestion upload root; stored paths are relative to it. */
  uploadRoot: string;
};

export function pipelineIngestFileCreator(deps: PipelineIngestDeps): IngestFileCreator {
  return {
    async createFromCsv({ csv, originalName, datasetId, createdBy }) {
      const catalogId = await deps.pool.maybeOneFirst(
        sql.type(row(Type.Object({ catalog_id: Type.Number() })))`
          select catalog_id from datasets where id = ${datasetId}`,
      );
      if (catalogId === null) {
        throw new NotFoundError(`the target dataset ${datasetId} does not exist`, {
          code: 'DATASET_NOT_FOUND',
        });
      }
      const storedPath = `scrapers/${randomUUID()}.csv`;
      const destination = path.join(deps.uploadRoot, storedPath);
      await mkdir(path.dirname(destination), { recursive: true });
      await writeFile(destination, csv);
      try {
        const { file } = await createIngestFile(
          { store: deps.store, queue: deps.queue, quotas: deps.quotas },
          {
            originalName,
            storedPath,
            sizeBytes: csv.length,
            mimeType: 'text/csv',
            format: 'csv',
            source: 'scraper',
            catalogId,
            userId: createdBy,
            settings: { ...DEFAULT_JOB_CONFIG, targets: { 0: { datasetId } } },
            sheets: [null],
          },
        );
        return { id: file.id };
      } catch (error) {
        // Nothing refers to the file when the ingest file was not recorded; the run keeps the CSV.
        await rm(destination, { force: true });
        throw error;
      }
    },
  };
}
