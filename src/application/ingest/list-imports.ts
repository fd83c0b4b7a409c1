import { catalogWriteScope, importVisibility, requireViewer, type Viewer } from '../../domain/access.ts';
import { COLLECTION_PAGING, type Page, pageOf } from '../../domain/collections/collections.ts';
import {
  IMPORT_LIST_LIMITS,
  INGEST_FILE_DEFAULT_SORT,
  INGEST_FILE_FIELDS,
} from '../../domain/ingest/import-list-fields.ts';
import { checkPageBytes } from '../../domain/read/page-bytes.ts';
import { parseCollectionSort } from '../../domain/read/sort.ts';
import {
  type FieldWhitelist,
  parseWhere,
  type SortKey,
  whereTreeFromQuery,
} from '../../domain/read/where.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { CatalogWithDatasets, ImportListings, ListPage } from '../../ports/ingest/import-listings.ts';

// "My imports": the ingest files a caller may see (their uploads and imports into their catalogs;
// admins all) as a Payload-style collection, and the catalogs they may import into with their
// datasets (the import wizard's list). Anonymous callers are refused (401).

export type ListQuery = Record<string, unknown> & { sort?: string; limit?: number; page?: number };

/** Payload's where/sort/limit/page of a list query, checked against the list's field whitelist. */
export function listPageOf(query: ListQuery, fields: FieldWhitelist, defaultSort: SortKey[]): ListPage {
  const where = parseWhere(whereTreeFromQuery(query), fields);
  const sort = parseCollectionSort(query.sort, fields);
  return {
    where,
    sort: sort.length ? sort : defaultSort,
    limit: query.limit ?? COLLECTION_PAGING.defaultLimit,
    page: query.page ?? 1,
  };
}

export async function listIngestFiles(
  deps: { listings: ImportListings },
  viewer: Viewer,
  query: ListQuery,
): Promise<Page & { files: { file: IngestFile; jobs: IngestJob[] }[] }> {
  const user = requireViewer(viewer);
  const page = listPageOf(query, INGEST_FILE_FIELDS, INGEST_FILE_DEFAULT_SORT);
  const { files, jobs, totalDocs } = await deps.listings.ingestFiles(importVisibility(user), page);
  const docs = files.map((file) => ({ file, jobs: jobs.filter((job) => job.ingestFileId === file.id) }));
  checkPageBytes(docs, page.limit);
  return { files: docs, ...pageOf(totalDocs, page.limit, page.page) };
}

export async function listCatalogsWithDatasets(
  deps: { listings: ImportListings },
  viewer: Viewer,
): Promise<{ catalogs: CatalogWithDatasets[]; truncated: boolean }> {
  const user = requireViewer(viewer);
  return deps.listings.catalogsWithDatasets(catalogWriteScope(user), {
    limit: IMPORT_LIST_LIMITS.catalogs,
    perCatalog: IMPORT_LIST_LIMITS.datasetsPerCatalog,
  });
}
