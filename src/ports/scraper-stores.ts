import type { CodeMap, RepoSource, ScraperRepo, SyncStatus } from '../domain/scrapers/repos.ts';
import type { ManifestScraper } from '../domain/scrapers/manifest.ts';
import type { RunStatus, TriggeredBy } from '../domain/scrapers/runs.ts';
import type { RunOutcome, Scraper, ScraperRun } from '../domain/scrapers/scrapers.ts';

export type NewScraperRepo = {
  name: string;
  slug: string;
  catalogId: number | null;
  createdBy: number;
} & RepoSource;

export interface ScraperRepoStore {
  create(repo: NewScraperRepo): Promise<ScraperRepo>;
  get(id: number): Promise<ScraperRepo | null>;
  /** Replaces the source; marks the repo pending when `resync`. */
  updateSource(id: number, source: RepoSource, resync: boolean): Promise<ScraperRepo>;
  /** Marks a sync as requested (status pending). */
  requestSync(id: number): Promise<void>;
  setSyncStatus(id: number, status: SyncStatus, error?: string | null): Promise<void>;
  /**
   * Deletes the repo with its scrapers and their runs, unless one of its scrapers is running:
   * 'running' then, and nothing is deleted.
   */
  removeUnlessRunning(id: number): Promise<'deleted' | 'running' | 'missing'>;
}

export type ReconcileResult = {
  created: string[];
  updated: string[];
  deleted: string[];
  /** Scrapers gone from the manifest but running now: disabled, deleted by a later sync. */
  keptWhileRunning: string[];
};

export interface ScraperStore {
  get(id: number): Promise<Scraper | null>;
  listByRepo(repoId: number): Promise<Scraper[]>;
  /** Creates, updates and deletes the repo's scrapers by slug in one transaction. */
  reconcile(repoId: number, declared: ManifestScraper[]): Promise<ReconcileResult>;
  /** Enabled scrapers with a schedule whose last run is not running, for the schedule manager. */
  listSchedulable(): Promise<(Scraper & { lastScheduledFor: string | null })[]>;
  setWebhook(id: number, enabled: boolean, tokenHash: string | null): Promise<void>;
  findByWebhookHash(tokenHash: string): Promise<Scraper | null>;
  update(
    id: number,
    changes: Partial<Pick<Scraper, 'enabled' | 'envVars' | 'targetDatasetId' | 'autoImport'>>,
  ): Promise<void>;
}

export type NewRun = {
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
  listRunning(): Promise<(ScraperRun & { timeoutSecs: number })[]>;
}

export type { CodeMap };
