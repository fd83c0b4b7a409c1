/**
 * The read API's counts of a dataset left to one pass after a bulk import into it (docs/ingestion.md,
 * "Deferred counts").
 */
export interface DeferredCounts {
  /**
   * Marks an empty dataset's read-API counts pending (a bulk import then stores its events without
   * them); false, and nothing changes, when the dataset holds events. True when already pending.
   */
  deferDatasetCounts(datasetId: number): Promise<boolean>;
  datasetCountsPending(datasetId: number): Promise<boolean>;
  /** Adds a pending dataset's counts and clears the flag; false when it was not pending. */
  refreshDatasetCounts(datasetId: number): Promise<boolean>;
  /** Pending datasets that no import has written to for idleSeconds (a crashed import's). */
  datasetsAwaitingCounts(idleSeconds: number): Promise<number[]>;
}
