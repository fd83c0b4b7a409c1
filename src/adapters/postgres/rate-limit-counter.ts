import { Type } from 'typebox';
import { windowStart } from '../../domain/rate-limits.ts';
import type { RateLimitCounter } from '../../ports/rate-limit-counter.ts';
import { type DatabasePool, row, sql } from './database.ts';

const CountRow = Type.Object({ window_name: Type.String(), hits: Type.Number() });

/** One upsert per hit counts every window at once; old windows are swept now and then. */
export function postgresRateLimitCounter(
  pool: DatabasePool,
  options: { sweepEvery?: number } = {},
): RateLimitCounter {
  const sweepEvery = options.sweepEvery ?? 500;
  let hitsSinceSweep = 0;
  return {
    async hit(key, windows, now) {
      if (windows.length === 0) return [];
      const names = windows.map((w) => w.name);
      const starts = windows.map((w) => windowStart(w, now).toISOString());
      const rows = await pool.any(sql.type(row(CountRow))`
        insert into rate_limit_counters (key, window_name, window_start, hits)
        select ${key}, name, start, 1
        from unnest(${sql.array(names, 'text')}, ${sql.array(starts, 'timestamptz')}) as w(name, start)
        on conflict (key, window_name, window_start)
          do update set hits = rate_limit_counters.hits + 1
        returning window_name, hits`);
      hitsSinceSweep += 1;
      if (hitsSinceSweep >= sweepEvery) {
        hitsSinceSweep = 0;
        await pool.query(sql.unsafe`
          delete from rate_limit_counters where window_start < now() - interval '2 days'`);
      }
      return windows.map((window) => ({
        window,
        hits: rows.find((r) => r.window_name === window.name)?.hits ?? 0,
      }));
    },
  };
}
