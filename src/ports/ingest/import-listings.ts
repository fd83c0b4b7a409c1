import type { CatalogWriteScope, ImportVisibility } from '../../domain/access.ts';
import type { SortKey, WhereNode } from '../../domain/read/where.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { ScheduledIngest, ScheduledRun } from './schedule-store.ts';

// Lists of imports the way their owners see them: ingest files (with their jobs), scheduled
// imports with their last runs, and the catalogs an import may write into with their datasets.
// Every list is scoped by the domain's visibility rule and bounded by the caller's page.

export type ListPage = { where: WhereNode | null; sort: SortKey[]; limit: number; page: number };

export type CatalogWithDatasets = {
  id: number;
  slug: string;
  title: string;
  isPublic: boolean;
  datasets: { id: number; slug: string; title: string; isPublic: boolean }[];
};

/**
 * What became of the import a run created: the file's status and, once create-events completed,
 * its rows stored new, updated, and found stored already (unchanged); the reasons it waits for.
 */
export type ImportOutcome = {
  ingestFile: number;
  status: IngestFile['status'];
  rowsNew: number | null;
  rowsUpdated: number | null;
  rowsUnchanged: number | null;
  reviewReasons: string[];
};

/** A run with when it was queued and when it ended (null while it runs), and its import's outcome. */
export type ScheduledRunRecord = ScheduledRun & {
  createdAt: string;
  finishedAt: string | null;
  import: ImportOutcome | null;
};

export interface ImportListings {
  /** A page of the ingest files the visibility allows, with the jobs of those files. */
  ingestFiles(
    visibility: ImportVisibility,
    page: ListPage,
  ): Promise<{ files: IngestFile[]; jobs: IngestJob[]; totalDocs: number }>;
  /** The catalogs of the scope (at most `limit`, by title) with their datasets (at most `perCatalog` each). */
  catalogsWithDatasets(
    scope: CatalogWriteScope,
    limits: { limit: number; perCatalog: number },
  ): Promise<{ catalogs: CatalogWithDatasets[]; truncated: boolean }>;
  /** A page of the scheduled imports the visibility allows (creator or catalog owner; admins all). */
  schedules(
    visibility: ImportVisibility,
    page: ListPage,
  ): Promise<{ schedules: ScheduledIngest[]; totalDocs: number }>;
  /** The newest runs of a schedule, newest first. */
  runsOf(scheduleId: number, limit: number): Promise<ScheduledRunRecord[]>;
  /** Deletes a schedule (its runs go with it); false when it was gone already. */
  deleteSchedule(id: number): Promise<boolean>;
}
