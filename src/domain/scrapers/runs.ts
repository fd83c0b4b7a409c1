// Scraper runs: their states, the transitions between them, and when a run counts as stuck.

export type RunStatus = 'queued' | 'running' | 'success' | 'failed' | 'timeout';
export type TriggeredBy = 'schedule' | 'manual' | 'webhook';
export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'success', 'failed', 'timeout'];
export const FINISHED_STATUSES: readonly RunStatus[] = ['success', 'failed', 'timeout'];

/**
 * queued -> running -> success | failed | timeout. A queued run may also fail without running
 * (flag off, quota spent, cancelled, runner refused it); a finished run never changes again.
 */
const TRANSITIONS: Record<RunStatus, readonly RunStatus[]> = {
  queued: ['running', 'failed'],
  running: ['success', 'failed', 'timeout'],
  success: [],
  failed: [],
  timeout: [],
};

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

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

/** Why a run ended without success, as a code stored on the run next to the message. */
export type RunFailureCode =
  | 'SCRAPERS_DISABLED'
  | 'QUOTA_EXCEEDED'
  | 'CANCELLED'
  | 'RUNNER_BUSY'
  | 'RUNNER_UNAVAILABLE'
  | 'RUNNER_REJECTED'
  | 'OVERRUN'
  | 'STUCK'
  | 'SCRAPER_DELETED'
  | (string & {});

/** Statistics kept on the scraper, updated when a run finishes. */
export type RunStatistics = {
  totalRuns: number;
  successRuns: number;
  failedRuns: number;
  lastRunAt: string | null;
  lastRunStatus: RunStatus | null;
  lastRunDurationMs: number | null;
};
