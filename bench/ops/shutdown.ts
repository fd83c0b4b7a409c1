// Shutdown benchmark (not a test; issue 32 §2): SIGTERM -> exit of `chronomap worker` and
// `chronomap api`, idle and busy, next to the same run's baseline, a bare Node process that exits on
// SIGTERM (what a process costs to stop at all). Busy worker: an import in create-events, once
// between batches and once with a batch waiting on a lock (its statement cancelled after the grace).
// Busy API: an export whose statement waits on a lock (cut at the drain's bound, HTTP_DRAIN_MS).
// podman's default stop timeout is 10 s.
// Run: node bench/ops/shutdown.ts [--rows N]
// Uses DATABASE_URL's server when set, else the embedded cluster under .data/bench-postgres (fsync
// off); creates and drops a fresh database. Writes its figures to bench/results/shutdown-<date>.json.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openAsBlob, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { ensureEmbeddedCluster } from '../../src/adapters/postgres/embedded-cluster.ts';
import { createDatabasePool } from '../../src/adapters/postgres/database.ts';
import { benchUploader } from '../ingest/bench-uploader.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' } } });
const ROWS = Number(values.rows);
const say = (line: string) => process.stdout.write(`${line}\n`);
const CLI = path.join(projectRoot, 'bin', 'chronomap');
const workDir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-shutdown-bench-'));

async function adminUrl(): Promise<string> {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const cluster = await ensureEmbeddedCluster({
    dataDir: path.join(projectRoot, '.data', 'bench-postgres'),
    log: say,
    durability: 'disposable',
  });
  return cluster.url('postgres');
}

async function adminQuery(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

/** Starts a process and resolves once it printed `ready` (stdout or stderr). */
function start(command: string, args: string[], env: Record<string, string>, ready: RegExp) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let seen = '';
  const started = new Promise<RegExpMatchArray>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(ready);
      if (match) resolve(match);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${seen}`)));
  });
  return { child, started, output: () => seen };
}

/** SIGTERM -> exit, in seconds, and the exit code. */
async function stopTimed(child: ChildProcess): Promise<{ seconds: number; code: number | null }> {
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const begin = performance.now();
  child.kill('SIGTERM');
  const code = await exited;
  return { seconds: (performance.now() - begin) / 1000, code };
}

/** Holds `lock table <table> in <mode> mode` until the returned release is called. */
async function holdLock(url: string, table: string, mode: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query(`lock table ${table} in ${mode} mode`);
  return async () => {
    await client.query('commit');
    await client.end();
  };
}

async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 10));
}

const admin = await adminUrl();
const database = `chronomap_shutdown_${Date.now()}`;
await adminQuery(admin, `create database ${database}`);
const url = (() => {
  const parsed = new URL(admin);
  parsed.pathname = `/${database}`;
  return parsed.toString();
})();
const named = (name: string) => {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
};
const waitingOnLock = async (name: string) =>
  Number(
    (
      await adminQuery(
        url,
        `select count(*)::int as n from pg_stat_activity where application_name = '${name}' and wait_event_type = 'Lock'`,
      )
    ).rows[0]?.n,
  ) > 0;

const results: Record<string, { seconds: number; code: number | null; note?: string }> = {};
const report = (what: string, result: { seconds: number; code: number | null }, note = '') => {
  results[what] = { ...result, ...(note ? { note } : {}) };
  say(
    `${what.padEnd(46)} ${result.seconds.toFixed(2).padStart(6)} s  exit ${result.code}${note ? `  ${note}` : ''}`,
  );
};

const env = {
  DATABASE_URL: url,
  CHRONOMAP_DATA_DIR: workDir,
  LOG_LEVEL: 'info',
  API_PROCESSES: '1',
  PORT: '0',
  HOST: '127.0.0.1',
  GEOCODER: 'off',
  // An export is cut by the drain's bound here, not by its own budgets.
  READ_STATEMENT_TIMEOUT_MS: '60000',
  READ_REQUEST_BUDGET_MS: '60000',
};
try {
  const migrated = start(CLI, ['migrate'], env, /database is up to date|applied \d+ migration/);
  await migrated.started;
  await new Promise((resolve) => migrated.child.once('exit', resolve));
  say(
    `# ${os.cpus().length} CPU(s), load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );

  const bare = start(
    process.execPath,
    ['-e', "process.on('SIGTERM', () => process.exit(0)); console.log('ready'); setInterval(() => {}, 1000)"],
    {},
    /ready/,
  );
  await bare.started;
  report('baseline: bare Node process', await stopTimed(bare.child));

  const idleWorker = start(CLI, ['worker'], env, /chronomap worker running/);
  await idleWorker.started;
  report('worker, idle', await stopTimed(idleWorker.child));

  const idleApi = start(CLI, ['api'], env, /listening on (http:\/\/[^\s]+)/);
  await idleApi.started;
  report('api, idle', await stopTimed(idleApi.child));

  // Busy API: an export whose statement waits on a lock.
  const busyApi = start(
    CLI,
    ['api'],
    { ...env, DATABASE_URL: named('bench-api') },
    /listening on (http:\/\/[^\s]+)/,
  );
  const base = (await busyApi.started)[1] as string;
  const release = await holdLock(url, 'events', 'access exclusive');
  const seen = new Promise<string>((resolve) => {
    http
      .get(`${base}/api/v1/events.csv`, (response) => {
        response.resume();
        response.on('end', () => resolve(`${response.statusCode} complete=${response.complete}`));
        response.on('error', (error) => resolve(`${response.statusCode} ${error.message}`));
      })
      .on('error', (error) => resolve(error.message));
  });
  await waitUntil(() => waitingOnLock('bench-api'));
  const busyApiStop = await stopTimed(busyApi.child);
  report('api, an export in flight', busyApiStop, `client saw: ${await seen}`);
  await release();

  // An import to be busy with, uploaded through an API.
  const api = start(CLI, ['api'], env, /listening on (http:\/\/[^\s]+)/);
  const apiBase = (await api.started)[1] as string;
  const pool = await createDatabasePool(url, { maximumPoolSize: 2 });
  const { token, catalogId } = await benchUploader(pool, apiBase);
  const csv = path.join(workDir, 'rows.csv');
  const lines = ['id,time,latitude,longitude,title'];
  for (let i = 0; i < ROWS; i++)
    lines.push(
      `e${i},2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z,${(i % 180) - 90},${(i % 360) - 180},e ${i}`,
    );
  writeFileSync(csv, lines.join('\n'));
  const form = new FormData();
  form.set('catalog', String(catalogId));
  form.set('file', await openAsBlob(csv, { type: 'text/csv' }), 'rows.csv');
  const uploaded = await fetch(`${apiBase}/api/ingest-files`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  if (uploaded.status !== 201)
    throw new Error(`upload answered ${uploaded.status}: ${await uploaded.text()}`);
  await stopTimed(api.child);
  const rowsDone = async () =>
    Number(
      (
        await adminQuery(
          url,
          `select coalesce(max(rows_processed), 0)::int as n from ingest_job_stages where stage = 'create-events'`,
        )
      ).rows[0]?.n,
    );

  // Busy worker, between batches.
  const busyWorker = start(CLI, ['worker'], env, /chronomap worker running/);
  await busyWorker.started;
  const before = await rowsDone();
  await waitUntil(async () => (await rowsDone()) > before + 2000);
  const busyStop = await stopTimed(busyWorker.child);
  report(
    'worker, an import in create-events',
    busyStop,
    `${await rowsDone()} of ${ROWS} rows done; ${busyWorker.output().match(/shutdown: .*/)?.[0] ?? ''}`,
  );

  // Busy worker, a batch waiting on a lock: its statement is cancelled after the grace.
  const blockedWorker = start(
    CLI,
    ['worker'],
    { ...env, DATABASE_URL: named('bench-worker') },
    /chronomap worker running/,
  );
  await blockedWorker.started;
  const resumedAt = await rowsDone();
  await waitUntil(async () => (await rowsDone()) > resumedAt);
  const unlock = await holdLock(url, 'events', 'share');
  await waitUntil(() => waitingOnLock('bench-worker'));
  const blockedStop = await stopTimed(blockedWorker.child);
  await unlock();
  report(
    'worker, an import whose batch waits on a lock',
    blockedStop,
    blockedWorker.output().match(/shutdown: .*/)?.[0] ?? '',
  );
  await pool.end();

  mkdirSync(path.join(projectRoot, 'bench', 'results'), { recursive: true });
  const file = path.join(
    projectRoot,
    'bench',
    'results',
    `shutdown-${new Date().toISOString().slice(0, 10)}.json`,
  );
  writeFileSync(file, `${JSON.stringify({ rows: ROWS, loadAverage: os.loadavg(), results }, null, 2)}\n`);
  say(`# written to ${path.relative(projectRoot, file)}`);
} finally {
  await adminQuery(admin, `drop database ${database} with (force)`);
}
