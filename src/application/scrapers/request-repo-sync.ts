import { NotFoundError } from '../../domain/errors.ts';
import type { Actor } from '../../domain/scrapers/access.ts';
import { canManageScraperRepo } from '../../domain/access.ts';
import { requireScraperAccess } from './trigger-scraper-run.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/**
 * `POST /api/scraper-repos/{id}/sync`: the owner or an admin forces a sync. Callers without scraper
 * access get the collection's 403; for anyone else the repo is not there (404, like the collection).
 */
export async function requestRepoSync(
  deps: Pick<ScraperDeps, 'repos' | 'jobs'>,
  actor: Actor,
  repoId: number,
): Promise<{ repoId: number; jobId: string | null; syncStatus: 'pending' }> {
  requireScraperAccess(actor);
  const repo = await deps.repos.get(repoId);
  if (!repo || !canManageScraperRepo(actor, repo)) {
    throw new NotFoundError(`scraper repo ${repoId} not found`, { code: 'SCRAPER_REPO_NOT_FOUND' });
  }
  await deps.repos.requestSync(repoId);
  const { jobId } = await deps.jobs.enqueueSync(repoId);
  return { repoId, jobId, syncStatus: 'pending' };
}
