import { ValidationError } from '../errors.ts';
import { parseDataPath } from '../read/read-query.ts';
import type { FieldWhitelist } from '../read/where.ts';

// The collections exposed at /api/{collection}, with the fields a caller may filter and sort on.
// A later collection (ingest-files...) adds an entry here, its columns in
// adapters/postgres/collections/collection-tables.ts and its access rules in application/collections/collection-documents.ts.

const timestamps = { createdAt: { type: 'date' }, updatedAt: { type: 'date' } } as const;

/** Catalogs and datasets describe themselves the same way. */
const described = {
  slug: { type: 'string' },
  title: { type: 'string' },
  description: { type: 'string' },
  isPublic: { type: 'boolean' },
  createdBy: { type: 'number' },
  ...timestamps,
} as const;

export const COLLECTION_FIELDS = {
  users: {
    id: { type: 'number' },
    email: { type: 'string' },
    role: { type: 'string' },
    trustLevel: { type: 'number' },
    ...timestamps,
  },
  catalogs: { id: { type: 'number' }, ...described },
  datasets: {
    id: { type: 'number' },
    catalog: { type: 'number' },
    ...described,
    provenancePublic: { type: 'boolean' },
  },
  events: {
    id: { type: 'number' },
    dataset: { type: 'number' },
    catalog: { type: 'number' },
    uniqueId: { type: 'string' },
    title: { type: 'string' },
    eventTimestamp: { type: 'date' },
    isValid: { type: 'boolean' },
    ...timestamps,
  },
  'scraper-repos': {
    id: { type: 'number' },
    name: { type: 'string' },
    slug: { type: 'string' },
    sourceType: { type: 'string' },
    gitUrl: { type: 'string' },
    gitBranch: { type: 'string' },
    catalog: { type: 'number' },
    createdBy: { type: 'number' },
    syncStatus: { type: 'string' },
    lastSyncAt: { type: 'date' },
    ...timestamps,
  },
  scrapers: {
    id: { type: 'number' },
    repo: { type: 'number' },
    name: { type: 'string' },
    slug: { type: 'string' },
    runtime: { type: 'string' },
    schedule: { type: 'string' },
    enabled: { type: 'boolean' },
    targetDataset: { type: 'number' },
    autoImport: { type: 'boolean' },
    reviewDuplicates: { type: 'string' },
    webhookEnabled: { type: 'boolean' },
    lastRunStatus: { type: 'string' },
    lastRunAt: { type: 'date' },
    ...timestamps,
  },
  'scraper-runs': {
    id: { type: 'number' },
    runId: { type: 'string' },
    scraper: { type: 'number' },
    status: { type: 'string' },
    triggeredBy: { type: 'string' },
    errorCode: { type: 'string' },
    exitCode: { type: 'number' },
    queuedAt: { type: 'date' },
    startedAt: { type: 'date' },
    finishedAt: { type: 'date' },
  },
} as const satisfies Record<string, FieldWhitelist>;

export type CollectionSlug = keyof typeof COLLECTION_FIELDS;

/**
 * The scraper collections: their records come from scraper use cases (a repo's sync makes its
 * scrapers, triggers make runs), so only listing and reading go through the generic documents code.
 */
export type ScraperCollectionSlug = 'scraper-repos' | 'scrapers' | 'scraper-runs';
/** The collections whose documents are written field by field through the generic endpoints. */
export type DocumentCollectionSlug = Exclude<CollectionSlug, ScraperCollectionSlug>;

export const COLLECTION_PAGING = { defaultLimit: 10, maxLimit: 1000 };

export type Page = {
  totalDocs: number;
  limit: number;
  page: number;
  totalPages: number;
  hasNextPage: boolean;
  hasPrevPage: boolean;
  nextPage: number | null;
  prevPage: number | null;
  pagingCounter: number;
};

/** Payload's paging fields for a page of `limit` out of `totalDocs`. */
export function pageOf(totalDocs: number, limit: number, page: number): Page {
  const totalPages = Math.max(1, Math.ceil(totalDocs / limit));
  return {
    totalDocs,
    limit,
    page,
    totalPages,
    hasNextPage: page < totalPages,
    hasPrevPage: page > 1,
    nextPage: page < totalPages ? page + 1 : null,
    prevPage: page > 1 ? page - 1 : null,
    pagingCounter: (page - 1) * limit + 1,
  };
}

/** How many custom date fields a dataset may declare (each is a filter `dateField=data.<name>` offers). */
export const MAX_DATE_FIELDS = 20;

/**
 * A dataset's declared date fields (`dateFields`), as written by PATCH or POST /api/datasets: paths
 * into the events' `data`, given with or without the `data.` prefix and stored without it, each a
 * path the read API's `dateField` parameter accepts; duplicates dropped, order kept.
 */
export function parseDateFields(value: unknown): string[] {
  if (!Array.isArray(value) || value.length > MAX_DATE_FIELDS) {
    throw new ValidationError(`dateFields must be a list of at most ${MAX_DATE_FIELDS} field names`, {
      field: 'dateFields',
    });
  }
  const names = value.map((item) => {
    const text = typeof item === 'string' ? item : '';
    const path = text.startsWith('data.') ? text : `data.${text}`;
    return parseDataPath(path, 'dateFields').join('.');
  });
  return [...new Set(names)];
}
