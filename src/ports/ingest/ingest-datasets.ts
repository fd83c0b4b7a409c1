/** The datasets an import writes to: created or checked when a file arrives, looked into by its stages. */
export interface IngestDatasets {
  createDataset(
    catalogId: number,
    title: string,
    userId: number | null,
  ): Promise<{ id: number; title: string }>;
  datasetInCatalog(datasetId: number, catalogId: number): Promise<boolean>;
  /** The catalog the dataset belongs to; null when the dataset does not exist. */
  catalogOfDataset(datasetId: number): Promise<number | null>;
  /**
   * Deletes the dataset when it holds no events and no job other than a failed one writes to it
   * (an import that created it and failed leaves nothing behind); false when it was kept.
   */
  removeEmptyDataset(datasetId: number): Promise<boolean>;
  catalogExists(catalogId: number): Promise<boolean>;
  /** How many of these unique ids the dataset already holds. */
  countExisting(datasetId: number, uniqueIds: string[]): Promise<number>;
  datasetHasEvents(datasetId: number): Promise<boolean>;
}
