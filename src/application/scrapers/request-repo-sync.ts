import { DomainError, NotFoundError } from '../../domain/errors.ts';
import { type Actor, canManageRepo } from '../../domain/scrapers/access.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/** `POST /api/scraper-repos/{id}/sync`: the owner or an admin forces a sync. */
export async function requestRepoSync(
  deps: Pick<ScraperDeps, 'repos' | 'jobs'>,
  actor: Actor,
  repoId: number,
): Promise<{ repoId: number; jobId: string | null; syncStatus: 'pending' }> {
  const repo = await deps.repos.get(repoId);
  if (!repo) throw new NotFoundError(`scraper repo ${repoId} not found`, { code: 'SCRAPER_REPO_NOT_FOUND' });
  if (!canManageRepo(actor, repo)) {
    throw new DomainError('forbidden', 'only the repo owner or an admin may sync it', { code: 'FORBIDDEN' });
  }
  await deps.repos.requestSync(repoId);
  const { jobId } = await deps.jobs.enqueueSync(repoId);
  return { repoId, jobId, syncStatus: 'pending' };
}
