import { RateLimitedError, rateRefusal } from '../accounts/rate-limits.ts';

/**
 * The daily runs quota is spent: a rate-limit refusal of the daily window, so the HTTP adapter answers
 * it with the spec's rate-limit error (429, limitType daily) exactly as it answers the request windows.
 */
export class DailyQuotaExceededError extends RateLimitedError {
  constructor(message: string, limit: number, resetAt: Date, now: Date) {
    super(rateRefusal('daily', limit, resetAt, now), message, 'SCRAPER_RUNS_QUOTA_EXCEEDED');
    this.name = 'DailyQuotaExceededError';
  }
}

/** The manifest could not be read (missing file, YAML syntax, unreachable git host). */
export class ManifestUnreadableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestUnreadableError';
  }
}
