import type { ReviewDuplicates } from '../ingest/review.ts';
import type { ManifestScraper } from './manifest.ts';
import type { RunStatistics, RunStatus, TriggeredBy } from './runs.ts';

// A scraper as stored: the manifest's declaration plus settings the user keeps on the record
// (enabled, envVars, targetDataset, autoImport, reviewDuplicates, webhook) that a re-sync must not reset.

export type Scraper = ManifestScraper & {
  id: number;
  repoId: number;
  scheduleSince: string;
  enabled: boolean;
  envVars: Record<string, string>;
  targetDatasetId: number | null;
  autoImport: boolean;
  /** The auto-import's duplicate review (domain/ingest/review.ts, duplicateReviewFor). */
  reviewDuplicates: ReviewDuplicates;
  webhookEnabled: boolean;
  statistics: RunStatistics;
};

export type ScraperRun = {
  id: number;
  runId: string;
  scraperId: number;
  status: RunStatus;
  triggeredBy: TriggeredBy;
  triggeredByUser: number | null;
  scheduledFor: string | null;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  exitCode: number | null;
  stdout: string | null;
  stderr: string | null;
  error: string | null;
  errorCode: string | null;
  outputRows: number | null;
  outputBytes: number | null;
  resultFile: string | null;
  ingestFileId: number | null;
};

/** What a finished run records; the store applies it only to a run that is still running. */
export type RunOutcome = {
  status: 'success' | 'failed' | 'timeout';
  exitCode: number | null;
  durationMs: number | null;
  stdout: string;
  stderr: string;
  error: string | null;
  errorCode: string | null;
  outputRows: number | null;
  outputBytes: number | null;
  resultFile: string | null;
};
