import { DomainError, NotFoundError } from '../../domain/errors.ts';
import type { Actor } from '../../domain/scrapers/access.ts';
import { canManageScraperRepo } from '../../domain/access.ts';
import { type ScraperRepo, sourceChanged } from '../../domain/scrapers/repos.ts';
import { readSource } from './create-scraper-repo.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/** A change of git URL, branch or uploaded code queues a new sync; rapid edits collapse into one. */
export async function updateScraperRepoSource(
  deps: Pick<ScraperDeps, 'repos' | 'jobs'>,
  actor: Actor,
  repoId: number,
  input: { sourceType: unknown; gitUrl?: unknown; gitBranch?: unknown; code?: unknown },
): Promise<{ repo: ScraperRepo; syncQueued: boolean }> {
  const before = await deps.repos.get(repoId);
  if (!before)
    throw new NotFoundError(`scraper repo ${repoId} not found`, { code: 'SCRAPER_REPO_NOT_FOUND' });
  if (!canManageScraperRepo(actor, before)) {
    throw new DomainError('forbidden', 'only the repo owner or an admin may change it', {
      code: 'FORBIDDEN',
    });
  }
  const source = readSource(input);
  const changed = sourceChanged(before, source);
  const repo = await deps.repos.updateSource(repoId, source, changed);
  if (changed) await deps.jobs.enqueueSync(repoId);
  return { repo, syncQueued: changed };
}
