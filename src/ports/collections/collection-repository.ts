import type { CatalogAccessFacts, DatasetAccessFacts, Viewer } from '../../domain/access.ts';
import type { CollectionSlug } from '../../domain/collections/collections.ts';
import type { SortKey, WhereNode } from '../../domain/read/where.ts';

/** A document as the API shows it: field names of domain/collections/collections.ts, JSON values. */
export type Doc = Record<string, unknown> & { id: number };

type FindQuery = { where: WhereNode | null; sort: SortKey[]; limit: number; page: number };

/** Where a catalog, dataset or event sits in the hierarchy, for write decisions. */
export type HierarchyFacts = {
  catalogId: number;
  catalog: CatalogAccessFacts;
  datasetId: number | null;
  dataset: DatasetAccessFacts | null;
};

/** Values to write, by field name; the adapter maps fields to columns. */
export type DocValues = Record<string, unknown>;

export interface CollectionRepository {
  /** Only documents the viewer may read (the access rule is part of the query). */
  find(
    collection: CollectionSlug,
    viewer: Viewer,
    query: FindQuery,
  ): Promise<{ docs: Doc[]; totalDocs: number }>;
  findById(collection: CollectionSlug, viewer: Viewer, id: number): Promise<Doc | null>;
  /** Regardless of the viewer: null when the row does not exist. */
  hierarchy(collection: 'catalogs' | 'datasets' | 'events', id: number): Promise<HierarchyFacts | null>;
  insert(collection: CollectionSlug, values: DocValues): Promise<number>;
  update(collection: CollectionSlug, id: number, values: DocValues): Promise<void>;
  remove(collection: CollectionSlug, id: number): Promise<void>;
}
