import { ValidationError } from '../errors.ts';

// Scheduled URL imports: what a schedule's fields must look like. Which schedules are due is the
// schedule store's query (postgres/ingest/schedule-store.ts, `due`).

export type ScheduleTrigger = 'schedule' | 'manual' | 'webhook';

/** Five fields (minute hour day-of-month month day-of-week), evaluated in UTC; seconds are not offered. */
export function assertFiveFieldCron(expression: string): string {
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5) {
    throw new ValidationError(
      `schedule "${expression}" must have five fields (minute hour day month weekday)`,
      {
        field: 'schedule',
      },
    );
  }
  return fields.join(' ');
}

/** Only http(s) URLs with a host; whether the host may be reached is the fetcher's SSRF guard's call. */
export function assertFetchableUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError(`"${raw}" is not a URL`, { field: 'url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ValidationError('the URL must start with http:// or https://', { field: 'url' });
  }
  if (url.username || url.password) {
    throw new ValidationError('credentials in the URL are not accepted', { field: 'url' });
  }
  return url.toString();
}
