// Cron due-ness, in UTC. The cron library (an adapter) answers "which occurrence came last at or
// before t"; this decides whether that occurrence is due now and has not been run yet.

/** The most recent occurrence at or before `at`, or null when the expression has none. */
type PreviousOccurrence = (expression: string, at: Date) => Date | null;

type ScheduleState = {
  schedule: string;
  /** When the current schedule took effect: occurrences before it are never run. */
  scheduleSince: Date;
  /** The due time of the last scheduled run created for this scraper, if any. */
  lastScheduledFor: Date | null;
};

/**
 * The due time to run now, or null. Only the latest missed occurrence is run (a schedule manager
 * that was down for a day runs each scraper once, not once per missed minute); a due time is run
 * at most once, which the run store guarantees with a unique (scraper, due time).
 */
export function dueTime(state: ScheduleState, now: Date, previous: PreviousOccurrence): Date | null {
  const occurrence = previous(state.schedule, now);
  if (!occurrence) return null;
  if (occurrence.getTime() <= state.scheduleSince.getTime()) return null;
  if (state.lastScheduledFor && occurrence.getTime() <= state.lastScheduledFor.getTime()) return null;
  return occurrence;
}
