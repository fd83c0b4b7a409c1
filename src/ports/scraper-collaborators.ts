import type { Actor } from '../domain/scrapers/access.ts';

// What the scraper subsystem needs from other parts of the product (accounts, ingestion), in its
// own terms. Until those parts land, adapters named for what they really do stand in.

export interface FeatureFlags {
  isEnabled(flag: 'enableScrapers'): Promise<boolean>;
}

export interface IngestFileCreator {
  /** Creates an ingest file from CSV bytes for a target dataset; the standard pipeline takes it from there. */
  createFromCsv(input: {
    csv: Buffer;
    originalName: string;
    datasetId: number;
    createdBy: number | null;
  }): Promise<{ id: number }>;
}

export interface ActorDirectory {
  /** The user's role and trust level, or null when the user does not exist. */
  find(userId: number): Promise<Actor | null>;
}

export interface ManifestSource {
  /** The parsed `scrapers.yml` of the repo; throws ManifestUnreadableError when it cannot be read or parsed. */
  load(repo: {
    sourceType: 'git' | 'upload';
    code: Record<string, string> | null;
    gitUrl: string | null;
    gitBranch: string | null;
  }): Promise<unknown>;
  /** The cron library's verdict on an expression (undefined when valid). */
  cronProblem(expression: string): string | undefined;
}

export interface RunIds {
  /** A UUID for the runner's run_id. */
  next(): string;
}

export interface ScraperJobQueue {
  /** Queues a sync; a sync already waiting for the repo absorbs this one. */
  enqueueSync(repoId: number): Promise<{ jobId: string | null }>;
  enqueueExecution(runId: number): Promise<{ jobId: string | null }>;
  /** Queues a sync to run after `seconds` (a running scraper waits to be deleted). */
  enqueueSyncLater(repoId: number, seconds: number): Promise<void>;
}
