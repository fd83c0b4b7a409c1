// Cron due-ness, in UTC, for every schedule (scraper schedules and scheduled imports). The cron
// library (an adapter) answers "which occurrence came last at or before t"; this decides whether
// that occurrence is due now and has not been run yet.

/** The most recent occurrence at or before `at`, or null when the expression has none. */
type PreviousOccurrence = (expression: string, at: Date) => Date | null;

type DueBounds = {
  schedule: string;
  /** Occurrences before this are not run (a scheduled import's `next_run_at`). */
  from?: Date | null;
  /** Occurrences at or before these are not run: the last due time run, when the schedule took effect. */
  after?: readonly (Date | null)[];
};

/**
 * The due time to run now, or null: the latest occurrence at or before `now`, when the bounds allow
 * it. Only the latest missed occurrence is run (a schedule manager that was down for a day runs each
 * schedule once, not once per missed minute), and it is always the latest: a manager that ran late,
 * or one that died between queueing a run and recording it, never makes the next pass skip the
 * minute that is due. A due time is run at most once, which the run stores guarantee with a unique
 * (schedule, due time).
 */
export function dueTime(bounds: DueBounds, now: Date, previous: PreviousOccurrence): Date | null {
  const occurrence = previous(bounds.schedule, now);
  if (!occurrence) return null;
  if (bounds.from && occurrence.getTime() < bounds.from.getTime()) return null;
  for (const after of bounds.after ?? []) {
    if (after && occurrence.getTime() <= after.getTime()) return null;
  }
  return occurrence;
}
