import { ValidationError } from '../errors.ts';
import { FORBIDDEN_KEYS } from '../forbidden-keys.ts';
import type { ReviewDuplicates } from '../ingest/review.ts';
import type { SourceHealthView } from '../source-health.ts';
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
  /** Bad runs in a row and the alert threshold (domain/source-health.ts); unset where not read. */
  health?: SourceHealthView;
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
  /** The commit a git scraper ran, as the runner reported it (the events' provenance names it). */
  commit?: string | null;
};

/** A scraper's envVars: the container's environment, set by the API and the scraper page alike. */
export const ENV_VARS = {
  namePattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
  maxValueLength: 8192,
  maxCount: 100,
};
const ENV_NAME = new RegExp(ENV_VARS.namePattern);

/** Checks a whole envVars map: names like SHELL_NAMES, string values of bounded length, a bounded count. */
export function parseEnvVars(value: unknown): Record<string, string> {
  const fail = (message: string): never => {
    throw new ValidationError(message, { field: 'envVars', code: 'INVALID_ENV' });
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('envVars must be an object');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > ENV_VARS.maxCount) fail(`a scraper may have at most ${ENV_VARS.maxCount} envVars`);
  for (const [name, content] of entries) {
    if (!ENV_NAME.test(name) || FORBIDDEN_KEYS.has(name))
      fail(`env var name "${name.slice(0, 40)}" must be letters, digits and _, not starting with a digit`);
    if (typeof content !== 'string' || content.length > ENV_VARS.maxValueLength)
      fail(`the value of ${name} must be text of at most ${ENV_VARS.maxValueLength} characters`);
  }
  // fromEntries defines own properties: a name such as __proto__ stays a name, not a prototype.
  return Object.fromEntries(entries) as Record<string, string>;
}
