import type { RunStatus, TriggeredBy } from '../../domain/scrapers/runs.ts';
import type { RunOutcome, ScraperRun } from '../../domain/scrapers/scrapers.ts';

type NewRun = {
  scraperId: number;
  runId: string;
  triggeredBy: TriggeredBy;
  triggeredByUser: number | null;
  scheduledFor: Date | null;
};

export interface ScraperRunStore {
  /** Inserts a queued run; null when a run for that scheduled due time exists already. */
  createQueued(run: NewRun): Promise<ScraperRun | null>;
  get(id: number): Promise<ScraperRun | null>;
  /** queued -> running, and the scraper's lastRunStatus with it; false when the run was not queued. */
  start(id: number): Promise<boolean>;
  /** Ends a run that is still in `from`; false when it was not (cancelled or finished meanwhile). */
  finish(id: number, from: RunStatus, outcome: RunOutcome): Promise<boolean>;
  recordImport(
    id: number,
    result: { ingestFileId: number } | { error: string; resultFile: string },
  ): Promise<void>;
  /** Whether an import of one of the scraper's runs into that dataset completed. */
  hasCompletedImport(scraperId: number, datasetId: number): Promise<boolean>;
  listRunning(): Promise<(ScraperRun & { timeoutSecs: number })[]>;
}
