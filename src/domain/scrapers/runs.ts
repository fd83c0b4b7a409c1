// Scraper runs: their states, which of them are final, and when a run counts as stuck.

export type RunStatus = 'queued' | 'running' | 'success' | 'failed' | 'timeout';
export type TriggeredBy = 'schedule' | 'manual' | 'webhook';
const FINISHED_STATUSES: readonly RunStatus[] = ['success', 'failed', 'timeout'];

/**
 * queued -> running -> success | failed | timeout; a queued run may also fail without running
 * (flag off, quota spent, cancelled, runner refused it); a finished run never changes again. The run
 * store decides each move in its update (postgres/scrapers/scraper-run-store.ts: `where status = from`).
 */
export function isFinished(status: RunStatus): boolean {
  return FINISHED_STATUSES.includes(status);
}

/**
 * What the runner may take beyond the scraper's own timeout: clone (60 s by default), container
 * start, the stop/kill/rm sequence (12 s) and output checks. Past timeout + margin a run is stuck.
 */
export const STUCK_MARGIN_SECS = 180;

export function isStuck(
  run: { status: RunStatus; startedAt: Date | null },
  timeoutSecs: number,
  now: Date,
): boolean {
  if (run.status !== 'running' || !run.startedAt) return false;
  return now.getTime() - run.startedAt.getTime() > (timeoutSecs + STUCK_MARGIN_SECS) * 1000;
}

/** How long the main application waits for the runner's answer before it stops the run itself. */
export function overrunDeadlineMs(timeoutSecs: number): number {
  return (timeoutSecs + STUCK_MARGIN_SECS) * 1000;
}

/** Statistics kept on the scraper, updated when a run finishes. */
export type RunStatistics = {
  totalRuns: number;
  successRuns: number;
  failedRuns: number;
  lastRunAt: string | null;
  lastRunStatus: RunStatus | null;
  lastRunDurationMs: number | null;
};
