/**
 * Five-field cron expressions evaluated in UTC: the one port for every schedule (scheduled imports,
 * scraper schedules, manifest validation).
 */
export interface CronSchedule {
  /** Why the expression cannot be run (a five-field cron), or undefined when it can. */
  problem(expression: string): string | undefined;
  /** Throws a validation error (field `schedule`) for an expression it cannot run. */
  validate(expression: string): void;
  /** The first occurrence after `after`, or null when there is none. */
  nextAfter(expression: string, after: Date): Date | null;
  /** The latest occurrence at or before `at` (the schedule manager's own minute counts), or null. */
  previous(expression: string, at: Date): Date | null;
}
