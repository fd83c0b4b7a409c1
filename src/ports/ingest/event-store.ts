import type { NewEvent } from '../../domain/read/events.ts';

type CatalogInput = { slug: string; title: string; description?: string; isPublic: boolean };
type DatasetInput = { slug: string; title: string; description?: string; isPublic: boolean };

export interface EventStore {
  /**
   * The id of the catalog the service keeps under `key` (such as the demo's), creating it when
   * absent with the slug asked for, or the first free one after it (`demo-2`, ...). Found by the key
   * alone: a catalog a user made with the same slug is never taken for it.
   */
  ensureSystemCatalog(key: string, catalog: CatalogInput): Promise<number>;
  /** The same for a dataset of the service's, in that catalog. */
  ensureSystemDataset(key: string, catalogId: number, dataset: DatasetInput): Promise<number>;
  /** Inserts a batch in one statement; events whose uniqueId the dataset already has are skipped. */
  insertEvents(datasetId: number, events: NewEvent[]): Promise<{ inserted: number }>;
}
