import type { SourceRow } from '../domain/ingest/rows.ts';
import type { GeocodeOutcome } from './ingest-store.ts';

/** The file rows of one sheet: the header first, then each record as strings (or why it cannot be read). */
export interface SourceFiles {
  rows(
    file: { storedPath: string; format: 'csv' | 'xlsx' | 'ods' },
    sheetIndex: number,
  ): AsyncIterable<SourceRow>;
  remove(storedPath: string): Promise<void>;
  /** Sheet names of a workbook (one job each); a CSV has one unnamed sheet. */
  sheets(file: { storedPath: string; format: 'csv' | 'xlsx' | 'ods' }): Promise<(string | null)[]>;
}

export interface Geocoder {
  /** Cache key of the provider (a geocoder's answers are cached per provider). */
  readonly name: string;
  /** Each distinct address once; failures (nothing found, low confidence, (0,0)) are outcomes, transient errors throw. */
  geocode(addresses: string[]): Promise<Map<string, GeocodeOutcome>>;
}

export interface IngestQueue {
  enqueueIngestJob(jobId: number, options?: { startAfter?: Date }): Promise<void>;
}

/** Queues the refresh of a dataset's deferred read-API counts (at most one queued per dataset). */
export interface CountsRefreshQueue {
  enqueueCountsRefresh(datasetId: number): Promise<void>;
}

export interface Clock {
  now(): Date;
}

/** Answers of a remote geocoder kept across jobs and processes, so each address is asked once. */
export interface GeocodeCache {
  get(provider: string, queries: string[]): Promise<Map<string, GeocodeOutcome>>;
  put(provider: string, results: Map<string, GeocodeOutcome>): Promise<void>;
}
