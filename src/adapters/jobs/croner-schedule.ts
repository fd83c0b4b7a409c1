import { Cron } from 'croner';
import { ValidationError } from '../../domain/errors.ts';
import { assertFiveFieldCron } from '../../domain/ingest/schedules.ts';
import type { CronSchedule } from '../../ports/cron-schedule.ts';

// Five-field cron expressions evaluated in UTC with croner, for scheduled imports and scrapers alike
// (never started: we only ask for times).

function paused<T>(expression: string, use: (cron: Cron) => T): T {
  const cron = new Cron(expression, { mode: '5-part', timezone: 'UTC', paused: true });
  try {
    return use(cron);
  } finally {
    cron.stop();
  }
}

export const cronerSchedule: CronSchedule = {
  problem(expression) {
    try {
      paused(expression, () => undefined);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  },
  validate(expression) {
    const problem = this.problem(assertFiveFieldCron(expression));
    if (problem) throw new ValidationError(`schedule "${expression}": ${problem}`, { field: 'schedule' });
  },
  nextAfter(expression, after) {
    return paused(assertFiveFieldCron(expression), (cron) => cron.nextRun(after));
  },
  previous(expression, at) {
    return paused(expression, (cron) => {
      // previousRuns excludes an occurrence exactly at the reference; the schedule manager's own
      // minute must count as due, so look from just after it.
      const found = cron.previousRuns(1, new Date(at.getTime() + 1))[0] ?? null;
      return found && found.getTime() <= at.getTime() ? found : null;
    });
  },
};
