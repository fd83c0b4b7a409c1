import type { RepoSource, ScraperRepo, SyncStatus } from '../../domain/scrapers/repos.ts';

type NewScraperRepo = {
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
