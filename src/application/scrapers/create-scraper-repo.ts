import { DomainError } from '../../domain/errors.ts';
import { QuotaExceededError } from '../../domain/accounts/quotas.ts';
import type { Actor } from '../../domain/scrapers/access.ts';
import { hasScraperAccess } from '../../domain/access.ts';
import {
  type RepoSource,
  type ScraperRepo,
  validateCodeMap,
  validateGitSource,
  validateRepoIdentity,
} from '../../domain/scrapers/repos.ts';
import type { ScraperDeps } from './scraper-deps.ts';

type CreateScraperRepoInput = {
  name: unknown;
  slug: unknown;
  sourceType: unknown;
  gitUrl?: unknown;
  gitBranch?: unknown;
  code?: unknown;
  catalogId?: number | null;
};

/**
 * The create access rule of `scraper-repos` and its before-change step: the flag must be on, the
 * user needs scraper access, the input is validated (path traversal in uploaded code is a 400),
 * then the repos quota is taken. A sync is queued for the new repo.
 */
export async function createScraperRepo(
  deps: Pick<ScraperDeps, 'flags' | 'quotas' | 'repos' | 'jobs'>,
  actor: Actor,
  input: CreateScraperRepoInput,
): Promise<ScraperRepo> {
  if (!(await deps.flags.isEnabled('enableScrapers'))) {
    throw new DomainError('forbidden', 'scrapers are not enabled on this instance', {
      code: 'SCRAPERS_DISABLED',
    });
  }
  if (!hasScraperAccess(actor)) {
    throw new DomainError('forbidden', 'scrapers need trust level 3 (Trusted) or higher', {
      code: 'TRUST_LEVEL_TOO_LOW',
    });
  }
  const identity = validateRepoIdentity(input.name, input.slug);
  const source = readSource(input);
  const owned = [{ quota: 'scraperRepos' as const, amount: 1 }];
  try {
    await deps.quotas.take(actor.id, owned);
  } catch (error) {
    if (!(error instanceof QuotaExceededError)) throw error;
    throw new DomainError('quota_exceeded', `you may own at most ${error.limit} scraper repos`, {
      code: 'SCRAPER_REPOS_QUOTA_EXCEEDED',
    });
  }
  let repo: ScraperRepo;
  try {
    repo = await deps.repos.create({
      ...identity,
      ...source,
      catalogId: input.catalogId ?? null,
      createdBy: actor.id,
    });
  } catch (error) {
    // A repo that was not stored (a taken slug) gives its unit back.
    await deps.quotas.give(actor.id, owned);
    throw error;
  }
  await deps.jobs.enqueueSync(repo.id);
  return repo;
}

export function readSource(input: {
  sourceType: unknown;
  gitUrl?: unknown;
  gitBranch?: unknown;
  code?: unknown;
}): RepoSource {
  if (input.sourceType === 'upload') return { sourceType: 'upload', code: validateCodeMap(input.code) };
  if (input.sourceType === 'git')
    return { sourceType: 'git', ...validateGitSource(input.gitUrl, input.gitBranch) };
  throw new DomainError('validation', 'sourceType must be "git" or "upload"', {
    code: 'INVALID_SOURCE_TYPE',
  });
}
