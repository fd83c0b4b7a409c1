import type { DataExportStatus } from '../../domain/accounts/data-export.ts';

// Users' exports of their own data: the records, the job that builds them, and the reader of a
// user's data the job writes into the ZIP.

export type DataExport = {
  id: number;
  userId: number;
  status: DataExportStatus;
  storedPath: string | null;
  sizeBytes: number | null;
  error: string | null;
  expiresAt: string | null;
  createdAt: string;
  finishedAt: string | null;
};

export interface DataExportStore {
  /** A new queued export, or null when the user has an active one (the one-active rule, atomically). */
  create(userId: number): Promise<DataExport | null>;
  get(id: number): Promise<DataExport | null>;
  hasActive(userId: number): Promise<boolean>;
  /** The user's most recent export request, or null when they have made none. */
  latestFor(userId: number): Promise<DataExport | null>;
  /** The user's export requests made after `since`: how many, and when the oldest of them was. */
  requestsSince(userId: number, since: Date): Promise<{ count: number; oldest: Date | null }>;
  markRunning(id: number): Promise<void>;
  markReady(id: number, file: { storedPath: string; sizeBytes: number; expiresAt: string }): Promise<void>;
  markFailed(id: number, error: string): Promise<void>;
  /** Ready exports past their expiry (their files are removed, the records stay as expired). */
  expired(now: Date, limit: number): Promise<DataExport[]>;
  forgetFile(id: number): Promise<void>;
}

export interface DataExportQueue {
  enqueueDataExport(exportId: number): Promise<void>;
}

/** Everything of one user's, read in pages so a large account streams into the ZIP. */
export interface UserDataReader {
  account(userId: number): Promise<Record<string, unknown> | null>;
  catalogs(userId: number): Promise<Record<string, unknown>[]>;
  datasets(userId: number): Promise<Record<string, unknown>[]>;
  /** Events of the user's datasets, `limit` after the id `after`, by id. */
  events(userId: number, after: number, limit: number): Promise<Record<string, unknown>[]>;
  imports(userId: number): Promise<Record<string, unknown>[]>;
  scrapers(userId: number): Promise<Record<string, unknown>[]>;
  scraperRuns(userId: number): Promise<Record<string, unknown>[]>;
}

/** Writes an export's ZIP, entry by entry as its content arrives. */
export interface ExportArchive {
  write(
    exportId: number,
    entries: AsyncIterable<{ name: string; content: AsyncIterable<string> }>,
  ): Promise<{ storedPath: string; sizeBytes: number }>;
  open(storedPath: string): NodeJS.ReadableStream;
  remove(storedPath: string): Promise<void>;
}
