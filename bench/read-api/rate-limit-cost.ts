// What counting rate limits costs per request, without the rest of a request around it: callers
// hitting one key (as autocannon's 50 connections from one IP do) through
//  - the baseline: one upsert of the key's window rows per request (the counter before batching);
//  - postgresRateLimitCounter: counted in memory far from the limit, written in batches.
// Both on the benchmark database's rate_limit_counters, alternated round by round so that the
// machine's load hits both alike; the keys are removed at the end.
//
//   node bench/read-api/rate-limit-cost.ts [--callers 50] [--duration 5] [--rounds 3]

import { parseArgs } from 'node:util';
import { createDatabasePool, type DatabasePool, sql } from '../../src/adapters/postgres/database.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { postgresRateLimitCounter } from '../../src/adapters/postgres/accounts/rate-limit-counter.ts';
import type { RateWindow } from '../../src/domain/accounts/quotas.ts';
import { windowStart } from '../../src/domain/accounts/rate-limits.ts';
import { benchDatabaseUrl } from './bench-database.ts';
import { callRate, median } from './call-rate.ts';
import { loadAverage } from './measure.ts';

const { values: options } = parseArgs({
  options: {
    callers: { type: 'string', default: '50' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
  },
});

const WINDOWS: RateWindow[] = [
  { name: 'burst', seconds: 10, limit: 1_000_000_000 },
  { name: 'hourly', seconds: 3600, limit: 1_000_000_000 },
  { name: 'daily', seconds: 86400, limit: 1_000_000_000 },
];

/** The counter before batching: one upsert of every window per hit. */
async function upsertPerHit(pool: DatabasePool, key: string, now: Date): Promise<void> {
  await pool.query(sql.unsafe`
    insert into rate_limit_counters (key, window_name, window_start, hits)
    select ${key}, name, start, 1
    from unnest(${sql.array(
      WINDOWS.map((w) => w.name),
      'text',
    )}, ${sql.array(
      WINDOWS.map((w) => windowStart(w, now).toISOString()),
      'timestamptz',
    )}) as w(name, start)
    on conflict (key, window_name, window_start) do update set hits = rate_limit_counters.hits + 1
    returning window_name, hits`);
}

async function main(): Promise<void> {
  const url = await benchDatabaseUrl();
  await migrate(url, loadMigrations(), () => {});
  // The API's pool size: the callers queue on it as requests do.
  const pool = await createDatabasePool(url);
  const callers = Number(options.callers);
  const seconds = Number(options.duration);
  const batched = postgresRateLimitCounter(pool);
  const results: Record<string, number[]> = { 'upsert per request (baseline)': [], batched: [] };
  try {
    for (let round = 1; round <= Number(options.rounds); round++) {
      const baseline = await callRate(
        () => upsertPerHit(pool, 'bench:baseline', new Date()),
        callers,
        seconds,
      );
      results['upsert per request (baseline)']?.push(baseline);
      process.stdout.write(
        `round ${round} baseline: ${Math.round(baseline)} hits/s; load ${loadAverage()}\n`,
      );
      const fast = await callRate(() => batched.hit('bench:batched', WINDOWS, new Date()), callers, seconds);
      await batched.flush();
      results.batched?.push(fast);
      process.stdout.write(`round ${round} batched: ${Math.round(fast)} hits/s; load ${loadAverage()}\n`);
    }
    const base = median(results['upsert per request (baseline)'] ?? []);
    process.stdout.write(
      `\n| counter | median hits/s | vs baseline |\n|---|---|---|\n${Object.entries(results)
        .map(
          ([name, values]) =>
            `| ${name} | ${Math.round(median(values))} | ${(median(values) / base).toFixed(1)}x |`,
        )
        .join(
          '\n',
        )}\n\n${callers} callers on one key, ${seconds} s per variant and round; load ${loadAverage()}\n`,
    );
  } finally {
    await pool.query(sql.unsafe`delete from rate_limit_counters where key like 'bench:%'`);
    await pool.end();
  }
}

await main();
