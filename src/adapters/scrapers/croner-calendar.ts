import { Cron } from 'croner';
import type { CronCalendar } from '../../ports/scraper-collaborators.ts';

/** Five-field cron evaluated in UTC by croner. */
export function cronerCalendar(): CronCalendar {
  return {
    previous(expression, at) {
      const cron = new Cron(expression, { mode: '5-part', timezone: 'UTC', paused: true });
      try {
        return cron.previousRuns(1, at)[0] ?? null;
      } finally {
        cron.stop();
      }
    },
  };
}
