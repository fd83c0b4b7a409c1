import { DomainError } from '../errors.ts';
import { RateLimitedError, rateRefusal } from './rate-limits.ts';

// A user's export of their own data: one active at a time, a few a day, downloadable until it
// expires (then its file is gone).

export type DataExportStatus = 'queued' | 'running' | 'ready' | 'failed';

const DAY_MS = 24 * 60 * 60 * 1000;

export const DATA_EXPORT_LIMITS = {
  /** Exports a user may request per rolling 24 hours. */
  perDay: 5,
  /** How long a finished export stays downloadable. */
  ttlMs: DAY_MS,
};

/** The ZIP's files: JSON for records, CSV for the tables a spreadsheet opens. */
export const EXPORT_FILES = [
  'account.json',
  'catalogs.json',
  'datasets.json',
  'events.csv',
  'imports.json',
  'scrapers.json',
  'scraper-runs.json',
] as const;

/**
 * One export at a time (409), and at most `perDay` requests in a rolling 24 hours: beyond it, the
 * spec's rate-limit refusal (429, limitType daily) until the oldest of them is a day old.
 */
export function assertMayRequestExport(
  active: boolean,
  recent: { count: number; oldest: Date | null },
  now: Date,
): void {
  if (active) {
    throw new DomainError(
      'conflict',
      'an export of your data is being built already; wait for it to finish',
      {
        code: 'EXPORT_IN_PROGRESS',
      },
    );
  }
  if (recent.count >= DATA_EXPORT_LIMITS.perDay) {
    const reset = new Date((recent.oldest ?? now).getTime() + DAY_MS);
    throw new RateLimitedError(
      rateRefusal('daily', DATA_EXPORT_LIMITS.perDay, reset, now),
      `at most ${DATA_EXPORT_LIMITS.perDay} exports a day; try again after ${reset.toISOString()}`,
      'EXPORT_RATE_LIMITED',
    );
  }
}
