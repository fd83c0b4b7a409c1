import { NotFoundError } from '../../domain/errors.ts';
import { DEFAULT_JOB_CONFIG } from '../../domain/ingest/settings.ts';
import type { FileStore } from '../../ports/ingest/file-store.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import type { IngestFileCreator } from '../../ports/ingest/ingest-file-creator.ts';
import { createIngestFile } from './create-ingest-file.ts';

// Auto-import of a scraper's CSV: the bytes are written through the FileStore and recorded by the
// create-ingest-file use case (source `scraper`), so the run's output goes through the unchanged
// staged pipeline into the scraper's target dataset. The scraper subsystem sees it through its own
// port (IngestFileCreator); this is that port's one implementation, in the application layer.

type ScraperCsvImportDeps = {
  store: IngestStore;
  queue: IngestQueue;
  quotas: Quotas;
  files: FileStore;
};

export function scraperCsvImport(deps: ScraperCsvImportDeps): IngestFileCreator {
  return {
    async createFromCsv({ csv, originalName, datasetId, createdBy, duplicateReview }) {
      const catalogId = await deps.store.catalogOfDataset(datasetId);
      if (catalogId === null) {
        throw new NotFoundError(`the target dataset ${datasetId} does not exist`, {
          code: 'DATASET_NOT_FOUND',
        });
      }
      const { storedPath, sha256 } = await deps.files.writeNew('scraper', '.csv', csv);
      try {
        const { file } = await createIngestFile(deps, {
          originalName,
          storedPath,
          sizeBytes: csv.length,
          mimeType: 'text/csv',
          format: 'csv',
          source: 'scraper',
          catalogId,
          userId: createdBy,
          settings: { ...DEFAULT_JOB_CONFIG, duplicateReview, targets: { 0: { datasetId } } },
          sheets: [null],
          origin: { sha256 },
        });
        return { id: file.id };
      } catch (error) {
        // Nothing refers to the file when the ingest file was not recorded; the run keeps the CSV.
        await deps.files.remove(storedPath);
        throw error;
      }
    },
  };
}
