import t from 'tap';
import type { RateWindow } from '../../../src/domain/accounts/quotas.ts';
import { type DatabasePool, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresRateLimitCounter } from '../../../src/adapters/postgres/accounts/rate-limit-counter.ts';
import { testDatabase } from '../../helpers/database.ts';

/** The real pool, with a count of the statements that return rows (the counter's upserts). */
function countingPool(pool: DatabasePool): { pool: DatabasePool; upserts: () => number } {
  let upserts = 0;
  const counted = new Proxy(pool, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property === 'any' && typeof value === 'function')
        return (...args: unknown[]) => {
          upserts += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { pool: counted, upserts: () => upserts };
}

const hourly: RateWindow = { name: 'hourly', seconds: 3600, limit: 100_000 };

t.test('requests that find their total stale at the same time share one write', async (t) => {
  const db = await testDatabase(t);
  const { pool, upserts } = countingPool(db.pool);
  const counter = postgresRateLimitCounter(pool, { flushIntervalMs: 200, localHits: 50 });
  const now = new Date();
  // A caller never seen: every one of these requests finds no total read in the last 200 ms.
  const results = await Promise.all(
    Array.from({ length: 40 }, () => counter.hit('ip:198.51.100.7', [hourly], now)),
  );
  t.ok(upserts() <= 2, `${upserts()} writes for 40 concurrent requests (one each would be 40)`);
  const counts = results.map((r) => r[0]?.hits ?? 0);
  t.ok(
    counts.every((hits) => hits >= 1 && hits <= 40),
    'each request is decided on a total that includes it',
  );
  t.equal(Math.max(...counts), 40, 'the last decided sees all of them');
  await counter.flush();
  const stored = await db.pool.oneFirst(
    sql.unsafe`select sum(hits)::int from rate_limit_counters where key = 'ip:198.51.100.7'`,
  );
  t.equal(stored, 40, 'every request counted once in the database');
});

t.test('near a limit every request is still written and decided on its own', async (t) => {
  const db = await testDatabase(t);
  const { pool, upserts } = countingPool(db.pool);
  const counter = postgresRateLimitCounter(pool, { flushIntervalMs: 200, localHits: 50 });
  const tight: RateWindow = { name: 'burst', seconds: 10, limit: 5 };
  const now = new Date();
  const counts: number[] = [];
  for (let i = 0; i < 7; i += 1)
    counts.push((await counter.hit('ip:198.51.100.8', [tight], now))[0]?.hits ?? 0);
  t.same(counts, [1, 2, 3, 4, 5, 6, 7], 'exact totals: the caller is refused from the sixth on');
  t.equal(upserts(), 7, 'one write per request within localHits of the limit');
});
