import { Cron } from 'croner';
import type { CronCalendar } from '../../ports/scraper-collaborators.ts';

/** Five-field cron evaluated in UTC by croner. */
export function cronerCalendar(): CronCalendar {
  return {
    previous(expression, at) {
      const cron = new Cron(expression, { mode: '5-part', timezone: 'UTC', paused: true });
      try {
        // previousRuns excludes an occurrence exactly at the reference; the schedule manager's own
        // minute must count as due, so look from just after it.
        const found = cron.previousRuns(1, new Date(at.getTime() + 1))[0] ?? null;
        return found && found.getTime() <= at.getTime() ? found : null;
      } finally {
        cron.stop();
      }
    },
  };
}
