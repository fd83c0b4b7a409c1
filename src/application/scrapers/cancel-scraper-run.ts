import { DomainError, NotFoundError } from '../../domain/errors.ts';
import type { Actor } from '../../domain/scrapers/access.ts';
import { canManageScraperRepo } from '../../domain/access.ts';
import { isFinished } from '../../domain/scrapers/runs.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/**
 * Cancels a queued or running run: it is marked failed (CANCELLED) first, so the execution job's
 * late answer cannot overwrite it, then the runner is asked to stop the container.
 */
export async function cancelScraperRun(
  deps: Pick<ScraperDeps, 'runs' | 'scrapers' | 'repos' | 'runner'>,
  actor: Actor,
  runId: number,
): Promise<{ cancelled: boolean }> {
  const run = await deps.runs.get(runId);
  if (!run) throw new NotFoundError(`scraper run ${runId} not found`, { code: 'SCRAPER_RUN_NOT_FOUND' });
  const scraper = await deps.scrapers.get(run.scraperId);
  const repo = scraper ? await deps.repos.get(scraper.repoId) : null;
  if (!repo || !canManageScraperRepo(actor, repo)) {
    throw new DomainError('forbidden', 'only the repo owner or an admin may cancel this run', {
      code: 'FORBIDDEN',
    });
  }
  if (isFinished(run.status)) return { cancelled: false };
  const cancelled = await deps.runs.finish(run.id, run.status, {
    status: 'failed',
    exitCode: null,
    durationMs: null,
    stdout: run.stdout ?? '',
    stderr: run.stderr ?? '',
    error: 'cancelled by a user',
    errorCode: 'CANCELLED',
    outputRows: null,
    outputBytes: null,
    resultFile: null,
  });
  if (cancelled && run.status === 'running' && deps.runner) {
    await deps.runner.stop(run.runId).catch(() => 'not_found');
  }
  return { cancelled };
}
