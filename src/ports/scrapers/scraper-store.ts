import type { ManifestScraper } from '../../domain/scrapers/manifest.ts';
import type { Scraper } from '../../domain/scrapers/scrapers.ts';

export type ReconcileResult = {
  created: string[];
  updated: string[];
  deleted: string[];
  /** Scrapers gone from the manifest but running now: their schedule cleared (never scheduled again), deleted by a later sync. */
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
    changes: Partial<
      Pick<Scraper, 'enabled' | 'envVars' | 'targetDatasetId' | 'autoImport' | 'reviewDuplicates'>
    > & { alertAfter?: number },
  ): Promise<void>;
}
