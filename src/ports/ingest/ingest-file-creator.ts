// How the scraper auto-import hands a scraper's CSV to the ingestion pipeline
// (application/ingest/import-scraper-csv.ts implements it over FileStore and createIngestFile).

import type { DuplicateReview } from '../../domain/ingest/review.ts';

export interface IngestFileCreator {
  /** Creates an ingest file from CSV bytes for a target dataset; the standard pipeline takes it from there. */
  createFromCsv(input: {
    csv: Buffer;
    originalName: string;
    datasetId: number;
    createdBy: number | null;
    /** Which duplicates may stop the import for review, decided by the scraper for this run. */
    duplicateReview: DuplicateReview;
  }): Promise<{ id: number }>;
}
