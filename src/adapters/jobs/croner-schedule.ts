import { Cron } from 'croner';
import { ValidationError } from '../../domain/errors.ts';
import { assertFiveFieldCron } from '../../domain/ingest/schedules.ts';
import type { CronSchedule } from '../../ports/schedule-store.ts';

/** Five-field cron expressions evaluated in UTC with croner (never started: we only ask for times). */
export const cronerSchedule: CronSchedule = {
  validate(expression) {
    assertFiveFieldCron(expression);
    try {
      new Cron(expression, { timezone: 'UTC', paused: true }).stop();
    } catch (error) {
      throw new ValidationError(`schedule "${expression}": ${(error as Error).message}`, {
        field: 'schedule',
      });
    }
  },
  nextAfter(expression, after) {
    const cron = new Cron(assertFiveFieldCron(expression), { timezone: 'UTC', paused: true });
    const next = cron.nextRun(after);
    cron.stop();
    return next;
  },
};
