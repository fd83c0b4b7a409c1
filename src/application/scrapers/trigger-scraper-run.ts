import { DomainError, NotFoundError } from '../../domain/errors.ts';
import { QuotaExceededError } from '../../domain/accounts/quotas.ts';
import type { Actor } from '../../domain/scrapers/access.ts';
import { canManageScraperRepo, ForbiddenError, hasScraperAccess } from '../../domain/access.ts';
import { DailyQuotaExceededError } from '../../domain/scrapers/errors.ts';
import type { TriggeredBy } from '../../domain/scrapers/runs.ts';
import type { Scraper, ScraperRun } from '../../domain/scrapers/scrapers.ts';
import type { ScraperDeps } from './scraper-deps.ts';

export type QueuedRun = { run: ScraperRun; jobId: string | null };

type Deps = Pick<
  ScraperDeps,
  'scrapers' | 'repos' | 'runs' | 'jobs' | 'flags' | 'quotas' | 'actors' | 'runIds' | 'clock'
>;

/** Levels 0-2 have no scraper access at all: 403, as the scraper collections answer. */
export function requireScraperAccess(actor: Actor): void {
  if (!hasScraperAccess(actor)) {
    throw new ForbiddenError('scrapers need trust level 3 (Trusted) or higher', 'TRUST_LEVEL_TOO_LOW');
  }
}

/**
 * `POST /api/scrapers/{id}/run`: the repo owner or an admin queues a run now. For anyone else with
 * scraper access the scraper is not there (404, like the collection), so its existence is not told.
 */
export async function triggerScraperRun(deps: Deps, actor: Actor, scraperId: number): Promise<QueuedRun> {
  requireScraperAccess(actor);
  const scraper = await deps.scrapers.get(scraperId);
  const repo = scraper ? await deps.repos.get(scraper.repoId) : null;
  if (!scraper || !repo || !canManageScraperRepo(actor, repo)) {
    throw new NotFoundError(`scraper ${scraperId} not found`, { code: 'SCRAPER_NOT_FOUND' });
  }
  return queueRun(deps, scraper, repo.createdBy, 'manual', actor.id);
}

/**
 * Queues a run for a trigger that came from a person or a webhook: refused while scrapers are
 * off, and with the spec's 429 once the owner's daily runs are spent (the execution job takes the
 * quota when it calls the runner).
 */
export async function queueRun(
  deps: Deps,
  scraper: Scraper,
  ownerId: number | null,
  triggeredBy: Exclude<TriggeredBy, 'schedule'>,
  triggeredByUser: number | null,
): Promise<QueuedRun> {
  if (!(await deps.flags.isEnabled('enableScrapers'))) {
    throw new DomainError('forbidden', 'scrapers are not enabled on this instance', {
      code: 'SCRAPERS_DISABLED',
    });
  }
  const owner = ownerId === null ? null : await deps.actors.find(ownerId);
  if (!owner || !hasScraperAccess(owner)) {
    throw new DomainError('forbidden', "the repo's owner has no scraper access", { code: 'FORBIDDEN' });
  }
  try {
    await deps.quotas.check(owner.id, [{ quota: 'scraperRunsPerDay', amount: 1 }]);
  } catch (error) {
    if (!(error instanceof QuotaExceededError)) throw error;
    const now = deps.clock.now();
    throw new DailyQuotaExceededError(
      `the daily limit of ${error.limit} scraper runs is reached`,
      error.limit,
      error.resetsAt ?? now,
      now,
    );
  }
  const run = await deps.runs.createQueued({
    scraperId: scraper.id,
    runId: deps.runIds.next(),
    triggeredBy,
    triggeredByUser,
    scheduledFor: null,
  });
  if (!run) throw new Error('a run without a due time was refused as a duplicate');
  const { jobId } = await deps.jobs.enqueueExecution(run.id);
  return { run, jobId };
}
