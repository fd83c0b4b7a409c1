// How the scraper auto-import hands a scraper's CSV to the ingestion pipeline
// (application/ingest/import-scraper-csv.ts implements it over FileStore and createIngestFile).

export interface IngestFileCreator {
  /** Creates an ingest file from CSV bytes for a target dataset; the standard pipeline takes it from there. */
  createFromCsv(input: {
    csv: Buffer;
    originalName: string;
    datasetId: number;
    createdBy: number | null;
  }): Promise<{ id: number }>;
}
