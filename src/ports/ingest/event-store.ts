import type { NewEvent } from '../../domain/read/events.ts';

type CatalogInput = { slug: string; title: string; description?: string; isPublic: boolean };
type DatasetInput = { slug: string; title: string; description?: string; isPublic: boolean };

export interface EventStore {
  /** Returns the id of the catalog with that slug, creating it when absent. */
  ensureCatalog(catalog: CatalogInput): Promise<number>;
  /** Returns the id of the dataset with that slug in the catalog, creating it when absent. */
  ensureDataset(catalogId: number, dataset: DatasetInput): Promise<number>;
  /** Inserts a batch in one statement; events whose uniqueId the dataset already has are skipped. */
  insertEvents(datasetId: number, events: NewEvent[]): Promise<{ inserted: number }>;
}
