import type { RateWindow } from '../../domain/accounts/quotas.ts';
import type { WindowCount } from '../../domain/accounts/rate-limits.ts';

/** Shared counters (in the database, so every API process sees the same numbers). */
export interface RateLimitCounter {
  /**
   * Counts one hit on `key` in each window (or `amount` of them: a page of features costs its rows,
   * src/domain/accounts/paged-rows.ts) and returns the counts after it.
   */
  hit(key: string, windows: RateWindow[], now: Date, amount?: number): Promise<WindowCount[]>;
  /** Writes the hits counted but not yet stored (on shutdown, and in tests that need them stored now). */
  flush(): Promise<void>;
}
