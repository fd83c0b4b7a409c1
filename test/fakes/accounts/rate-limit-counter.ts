import { windowStart } from '../../../src/domain/accounts/rate-limits.ts';
import type { RateLimitCounter } from '../../../src/ports/accounts/rate-limit-counter.ts';

/** Where the counts live: one per (key, window, window start). Counters made on one share them. */
export type RateLimitCounts = Map<string, number>;

/**
 * The RateLimitCounter port in memory: every hit counted at once (so `flush` has nothing to write),
 * in the fixed window slice that `now` falls in, exactly as one process of the Postgres counter
 * counts. Counters made on the same `counts` are two processes sharing one database. It passes the
 * behaviour suite postgresRateLimitCounter passes (test/contracts/accounts/rate-limit-counter.ts).
 */
export function memoryRateLimitCounter(counts: RateLimitCounts = new Map()): RateLimitCounter {
  return {
    async hit(key, windows, now, amount = 1) {
      return windows.map((window) => {
        const slice = `${key}\u0000${window.name}\u0000${windowStart(window, now).getTime()}`;
        const hits = (counts.get(slice) ?? 0) + amount;
        counts.set(slice, hits);
        return { window, hits };
      });
    },
    async flush() {},
  };
}
