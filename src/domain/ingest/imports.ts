import type { Classification } from './failures.ts';
import type { IngestSettings, JobConfig } from './settings.ts';
import type { Stage } from './stages.ts';

// The pipeline's entities: an ingest file (an upload, a fetch or a scraper's output) and its jobs
// (one per sheet), as the stores keep them and every use case, route and page reads them.

export type FileFormat = 'csv' | 'xlsx' | 'ods';
type IngestSource = 'upload' | 'scheduled' | 'webhook' | 'scraper';
type IngestFileStatus = 'pending' | 'processing' | 'needs-review' | 'completed' | 'partial' | 'failed';

export type IngestFile = {
  id: number;
  originalName: string;
  storedPath: string;
  sizeBytes: number;
  mimeType: string | null;
  format: FileFormat;
  source: IngestSource;
  status: IngestFileStatus;
  catalogId: number | null;
  uploadedBy: number | null;
  settings: IngestSettings;
  errorLog: string[];
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
};

/**
 * A failed job: the last failure with its classification. A completed job that skipped invalid rows:
 * lastError says how many, rowErrors lists the first ones.
 */
export type JobErrorLog = {
  lastError: string;
  code?: string | undefined;
  failedStage?: Stage;
  classification?: Classification;
  failedAt?: string;
  recoveryAttempt?: { attempt: number; previousError: string; recoveryStage: string; classification: string };
  rowErrors?: { row: number; field: string; message: string }[];
};

export type IngestJob = {
  id: number;
  ingestFileId: number;
  sheetIndex: number;
  sheetName: string | null;
  datasetId: number | null;
  datasetName: string | null;
  /** The dataset's slug, which the read API and its exports filter by (the pages' data links). */
  datasetSlug: string | null;
  stage: Stage;
  config: JobConfig;
  errorLog: JobErrorLog | null;
  reviewReasons: string[] | null;
  approvedAt: string | null;
  retryAttempts: number;
  lastRetryAt: string | null;
  nextRetryAt: string | null;
  failedAt: string | null;
  completedAt: string | null;
  createdAt: string;
};

/** A failed job with the name of its file (the admin's list of failures). */
export type FailedJobSummary = IngestJob & { fileName: string };
