import type { FieldWhitelist } from '../read/where.ts';

// The fields of the import lists: the `ingest-files` collection (GET /api/ingest-files) a caller may filter and sort
// on, in Payload's where/sort language (domain/read/where.ts). The SQL side maps each to a column of
// ingest_files (adapters/postgres/ingest/import-listings.ts).

export const INGEST_FILE_FIELDS = {
  id: { type: 'number' },
  originalName: { type: 'string' },
  status: { type: 'string' },
  source: { type: 'string' },
  format: { type: 'string' },
  catalog: { type: 'number' },
  uploadedBy: { type: 'number' },
  sizeBytes: { type: 'number' },
  createdAt: { type: 'date' },
  updatedAt: { type: 'date' },
  completedAt: { type: 'date' },
} as const satisfies FieldWhitelist;

/** Newest first unless the caller sorts otherwise: the list a person looks for their last import in. */
export const INGEST_FILE_DEFAULT_SORT = [{ field: 'createdAt', descending: true }];

/** The fields of GET /api/scheduled-ingests (the scheduled imports a caller may manage). */
export const SCHEDULE_FIELDS = {
  id: { type: 'number' },
  name: { type: 'string' },
  url: { type: 'string' },
  enabled: { type: 'boolean' },
  catalog: { type: 'number' },
  dataset: { type: 'number' },
  createdBy: { type: 'number' },
  lastStatus: { type: 'string' },
  nextRunAt: { type: 'date' },
  lastRunAt: { type: 'date' },
  createdAt: { type: 'date' },
  updatedAt: { type: 'date' },
} as const satisfies FieldWhitelist;

export const SCHEDULE_DEFAULT_SORT = [{ field: 'createdAt', descending: true }];

/** Bounds of the lists: runs shown per schedule, catalogs and datasets in the wizard's list. */
export const IMPORT_LIST_LIMITS = { runsPerSchedule: 20, catalogs: 500, datasetsPerCatalog: 500 };
