// How long a read waits behind a migration that waits for a lock (issue 32 §2: a migration waited
// 18 s behind a reader while an API read queued 14.2 s behind its pending lock). Each round: a
// session reads the table in a transaction it holds for --hold ms; a migration that needs ACCESS
// EXCLUSIVE on the table starts; once pg_locks shows it waiting, a reader starts and its wait is
// measured. Baseline: the same ALTER with no lock_timeout (the migrator before issue 32); then the
// migrator (src/adapters/postgres/migrator.ts) with lock_timeout 2000 ms (the default) and 200 ms.
// Median and maximum of --rounds rounds each.
//
// A plain table is enough: no PostGIS, no Chronomap schema. It lives in a schema of its own,
// `bench_lock_queue` (dropped at the end), of the benchmark database (bench/read-api/bench-database.ts:
// BENCH_DATABASE_URL, else `chronomap_bench` in this checkout's embedded cluster).
//
//   node bench/migrations/lock-queue.ts [--hold 3000] [--rounds 3]

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { benchDatabaseUrl } from '../read-api/bench-database.ts';

const { values } = parseArgs({
  options: { hold: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } },
});
const HOLD_MS = Number(values.hold);
const ROUNDS = Number(values.rounds);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(url: string, name: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: name });
  await client.connect();
  return client;
}

type Run = (url: string, round: number) => Promise<unknown>;

/** One round: the reader's wait in ms, behind `run`'s migration waiting on the held table. */
async function round(url: string, run: Run, index: number): Promise<number> {
  const probe = await connect(url, 'bench-probe');
  const blocker = await connect(url, 'bench-blocker');
  const reader = await connect(url, 'bench-reader');
  try {
    await blocker.query('begin');
    await blocker.query('select count(*) from bench_lock');
    const migrating = run(`${url}${url.includes('?') ? '&' : '?'}application_name=bench-migrator`, index);
    for (;;) {
      const waiting = await probe.query(
        `select 1 from pg_locks l join pg_stat_activity a on a.pid = l.pid
         where a.application_name = 'bench-migrator' and not l.granted and l.relation = 'bench_lock'::regclass`,
      );
      if (waiting.rowCount) break;
      await sleep(5);
    }
    const ends = sleep(HOLD_MS).then(() => blocker.query('commit'));
    const started = performance.now();
    await reader.query('select count(*) from bench_lock');
    const waited = performance.now() - started;
    await ends;
    await migrating;
    return waited;
  } finally {
    await Promise.all([probe.end(), blocker.end(), reader.end()]);
  }
}

const bare: Run = async (url, index) => {
  const client = await connect(url, 'bench-migrator');
  try {
    await client.query(`alter table bench_lock add column c${index} int`);
  } finally {
    await client.end();
  }
};

const migrator =
  (lockTimeoutMs: number): Run =>
  async (url, index) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-bench-migrations-'));
    try {
      writeFileSync(
        path.join(dir, `9${String(index).padStart(3, '0')}_bench.sql`),
        `alter table bench_lock add column c${index} int;`,
      );
      await migrate(url, loadMigrations(dir), () => {}, { lockTimeoutMs, retryDelayMs: 100 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

const SCHEMA = 'bench_lock_queue';
const database = await benchDatabaseUrl();
const admin = await connect(database, 'bench-setup');
await admin.query(`drop schema if exists ${SCHEMA} cascade; create schema ${SCHEMA}`);
// Every session of the bench, the migrator's included, works in that schema.
const url = `${database}${database.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${SCHEMA}`)}`;
const setup = await connect(url, 'bench-setup');
await setup.query('create table bench_lock (id int); insert into bench_lock select generate_series(1, 1000)');

const cases: [string, Run][] = [
  ['baseline: ALTER without lock_timeout', bare],
  ['migrator, lock_timeout 2000 ms (default)', migrator(2_000)],
  ['migrator, lock_timeout 200 ms', migrator(200)],
];
let index = 0;
console.log(
  `a reader's wait behind a migration waiting for a lock held ${HOLD_MS} ms (${ROUNDS} rounds each)`,
);
for (const [name, run] of cases) {
  const waits: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) waits.push(await round(url, run, (index += 1)));
  waits.sort((a, b) => a - b);
  const median = waits[Math.floor(waits.length / 2)] as number;
  console.log(
    `${name.padEnd(42)} median ${median.toFixed(0).padStart(5)} ms   max ${(waits.at(-1) as number).toFixed(0).padStart(5)} ms`,
  );
}
await setup.end();
await admin.query(`drop schema ${SCHEMA} cascade`);
await admin.end();
