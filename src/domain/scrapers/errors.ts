import { DomainError } from '../errors.ts';

/** The daily runs quota is spent: answered as the spec's rate-limit error (429, limitType daily). */
export class DailyQuotaExceededError extends DomainError {
  readonly resetAt: Date;
  readonly limit: number;

  constructor(message: string, limit: number, resetAt: Date) {
    super('rate_limited', message, { code: 'SCRAPER_RUNS_QUOTA_EXCEEDED' });
    this.name = 'DailyQuotaExceededError';
    this.limit = limit;
    this.resetAt = resetAt;
  }
}

/** The manifest could not be read (missing file, YAML syntax, unreachable git host). */
export class ManifestUnreadableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestUnreadableError';
  }
}
