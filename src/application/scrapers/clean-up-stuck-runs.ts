import { isStuck, STUCK_MARGIN_SECS } from '../../domain/scrapers/runs.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/**
 * Runs still `running` past their timeout plus a margin lost their worker or their runner: they
 * are marked failed and the runner is asked to stop them, in case the container still lives.
 */
export async function cleanUpStuckRuns(
  deps: Pick<ScraperDeps, 'runs' | 'runner' | 'clock'>,
): Promise<{ failed: number[] }> {
  const now = deps.clock.now();
  const failed: number[] = [];
  for (const run of await deps.runs.listRunning()) {
    if (
      !isStuck(
        { status: run.status, startedAt: run.startedAt ? new Date(run.startedAt) : null },
        run.timeoutSecs,
        now,
      )
    )
      continue;
    const marked = await deps.runs.finish(run.id, 'running', {
      status: 'failed',
      exitCode: null,
      durationMs: run.startedAt ? now.getTime() - new Date(run.startedAt).getTime() : null,
      stdout: run.stdout ?? '',
      stderr: run.stderr ?? '',
      error: `the run was still marked running ${run.timeoutSecs + STUCK_MARGIN_SECS} s after it started; its worker or runner was lost`,
      errorCode: 'STUCK',
      outputRows: null,
      outputBytes: null,
      resultFile: null,
    });
    if (!marked) continue;
    failed.push(run.id);
    await deps.runner?.stop(run.runId).catch(() => 'not_found');
  }
  return { failed };
}
