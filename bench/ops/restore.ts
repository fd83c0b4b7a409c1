// Measures `chronomap restore` of the benchmark set (bench/read-api/generate.ts) and, in the same
// run, the restore it replaced: one pg_restore of a pg_dump custom-format file in a single
// transaction (format 1 of `chronomap backup`, one process). Each restore goes into a new database
// on the same server, and is checked to hold as many events as the source.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/restore_bench node bench/ops/restore.ts [--jobs 2]
//
// The rows printed: the format-1 baseline, then `chronomap restore` (directory format) with one
// process and with --jobs processes (default: the cores, at most 4, as the command's default).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { backupDatabase, defaultJobs, restoreDatabase } from '../../src/adapters/postgres/backup.ts';
import { benchDatabaseUrl, withClient } from '../read-api/bench-database.ts';

const { values } = parseArgs({ options: { jobs: { type: 'string' } } });
const jobs = values.jobs ? Number(values.jobs) : defaultJobs();
const log = (line: string) => process.stdout.write(`${line}\n`);

const source = await benchDatabaseUrl();
const sourceName = new URL(source).pathname.slice(1);
const adminUrl = Object.assign(new URL(source), { pathname: '/postgres' }).toString();
const countEvents = (url: string) =>
  withClient(url, async (client) =>
    Number((await client.query('select count(*) as n from events')).rows[0].n),
  );
const events = await countEvents(source);
if (events === 0) throw new Error(`${sourceName} holds no events: run bench/read-api/generate.ts first`);

const work = mkdtempSync(path.join(tmpdir(), 'chronomap-restore-bench-'));
const bin = path.dirname(execFileSync('sh', ['-c', 'command -v pg_restore'], { encoding: 'utf8' }).trim());
const seconds = (started: number) => (performance.now() - started) / 1000;

/** A new empty database for one restore; its URL. */
async function freshDatabase(suffix: string): Promise<string> {
  const name = `${sourceName}_${suffix}`;
  await withClient(adminUrl, async (client) => {
    await client.query(`drop database if exists ${name} with (force)`);
    await client.query(`create database ${name}`);
  });
  return Object.assign(new URL(source), { pathname: `/${name}` }).toString();
}

async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await withClient(adminUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
}

const rows: { what: string; seconds: number }[] = [];
async function measure(what: string, suffix: string, restore: (target: string) => Promise<void>) {
  const target = await freshDatabase(suffix);
  const started = performance.now();
  await restore(target);
  const took = seconds(started);
  const restored = await countEvents(target);
  if (restored !== events) throw new Error(`${what}: restored ${restored} of ${events} events`);
  rows.push({ what, seconds: took });
  log(`${what}: ${took.toFixed(1)} s`);
  await dropDatabase(target);
}

try {
  log(`source: ${sourceName}, ${events} events; ${jobs} jobs`);
  // Baseline: what `chronomap backup`/`restore` did before (format 1).
  const customFile = path.join(work, 'database.dump');
  let started = performance.now();
  execFileSync(path.join(bin, 'pg_dump'), [
    '--format=custom',
    '--no-owner',
    '--file',
    customFile,
    '--dbname',
    source,
  ]);
  log(`format 1 dump (custom format, one process): ${seconds(started).toFixed(1)} s`);
  await measure('format 1: pg_restore --single-transaction (one process)', 'r1', async (target) => {
    execFileSync(path.join(bin, 'pg_restore'), [
      '--no-owner',
      '--exit-on-error',
      '--single-transaction',
      '--dbname',
      target,
      customFile,
    ]);
  });

  const backupDir = path.join(work, 'backup');
  started = performance.now();
  await backupDatabase({
    databaseUrl: source,
    dataDir: work,
    outDir: backupDir,
    version: 'bench',
    redactedUrl: sourceName,
    jobs,
  });
  log(`chronomap backup (directory format, ${jobs} jobs): ${seconds(started).toFixed(1)} s`);
  for (const count of [1, jobs])
    await measure(`chronomap restore --jobs ${count}`, `r${count}j`, (target) =>
      restoreDatabase({
        databaseUrl: target,
        dataDir: work,
        fromDir: backupDir,
        replace: false,
        jobs: count,
      }).then(() => {}),
    );

  const baseline = rows[0]?.seconds ?? 0;
  log('\n| restore | seconds | vs format 1 |\n| --- | ---: | ---: |');
  for (const row of rows)
    log(`| ${row.what} | ${row.seconds.toFixed(1)} | ${(baseline / row.seconds).toFixed(2)}× |`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
