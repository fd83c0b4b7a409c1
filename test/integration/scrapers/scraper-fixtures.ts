import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PgBoss } from 'pg-boss';
import type { Test } from 'tap';
import { Type } from 'typebox';
import { sweepWorkspaces } from '../../../runner/src/workspace.ts';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { startJobQueue } from '../../../src/adapters/jobs/job-queue.ts';
import { type DatabasePool, row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresFeatureFlagStore } from '../../../src/adapters/postgres/site/feature-flag-store.ts';
import { httpRunnerClient } from '../../../src/adapters/runner/runner-client.ts';
import { createScraperRepo } from '../../../src/application/scrapers/create-scraper-repo.ts';
import type { ScraperDeps } from '../../../src/application/scrapers/scraper-deps.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import type { RunnerClient } from '../../../src/ports/scrapers/runner-client.ts';
import { testConfig } from '../../helpers/app.ts';
import type { TestDatabase } from '../../helpers/database.ts';
import { stopProcess } from '../../helpers/processes.ts';

// Shared set-up of the scraper integration tests: users, scraper deps on a test database, and the
// real runner (runner/ of this repository, or the runner worktree next to it before the merge).

export const RUNNER_KEY = 'test-runner-key-0123456789abcdef';

export async function createUser(pool: DatabasePool, trustLevel: number, role: 'admin' | 'user' = 'user') {
  const id = await pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into users (email, password_hash, role, trust_level)
    values (${`u${Math.random().toString(36).slice(2)}@example.org`}, 'x', ${role}, ${trustLevel})
    returning id`);
  return { id, role, trustLevel };
}

export async function openBoss(t: Test, db: TestDatabase): Promise<PgBoss> {
  const boss = await startJobQueue(db.url, 'migrate', () => {});
  t.teardown(() => boss.stop({ graceful: false, timeout: 2_000 }));
  return boss;
}

/** What an admin does with PATCH /api/feature-flags: switch `enableScrapers` in the flag store. */
/**
 * An ingest file of a scraper's auto-import with one job that completed, its analyze-duplicates and
 * create-events outputs as the pipeline stores them: what a run's import outcome is read from.
 */
export async function completedScraperImport(
  pool: DatabasePool,
  outputs: { internal: number; external: number; created: number; updated: number; duplicates: number },
): Promise<number> {
  const Id = row(Type.Object({ id: Type.Number() }));
  const fileId = await pool.oneFirst(sql.type(Id)`
    insert into ingest_files (original_name, stored_path, size_bytes, format, source, status)
    values ('output.csv', 'scrapers/output.csv', 40, 'csv', 'scraper', 'completed') returning id`);
  const jobId = await pool.oneFirst(sql.type(Id)`
    insert into ingest_jobs (ingest_file_id, stage) values (${fileId}, 'completed') returning id`);
  const { internal, external, ...events } = outputs;
  await pool.query(sql.unsafe`
    insert into ingest_job_stages (ingest_job_id, stage, status, output) values
      (${jobId}, 'analyze-duplicates', 'completed', ${sql.jsonb({ internal, external })}),
      (${jobId}, 'create-events', 'completed', ${sql.jsonb(events)})`);
  return fileId;
}

export async function switchScrapers(pool: DatabasePool, enabled: boolean): Promise<void> {
  const admin = await createUser(pool, 0, 'admin');
  await postgresFeatureFlagStore(pool).write({ enableScrapers: enabled }, admin.id);
}

/**
 * The scraper deps of the composition root on the test database, with some replaced. By default
 * the admin has switched scrapers on in the flag store; `enableScrapers: false` gives deps that see
 * the flag off (without switching it off for the other deps of the same test).
 */
export async function scraperDeps(
  t: Test,
  db: TestDatabase,
  overrides: Partial<ScraperDeps> & { enableScrapers?: boolean } = {},
): Promise<ScraperDeps & { boss: PgBoss }> {
  const boss = await openBoss(t, db);
  const { enableScrapers = true, ...rest } = overrides;
  if (enableScrapers) await switchScrapers(db.pool, true);
  const off: Partial<ScraperDeps> = enableScrapers ? {} : { flags: { isEnabled: async () => false } };
  const deps = composeScraperDeps(testConfig(), db.pool, boss);
  return { ...deps, ...off, ...rest, boss };
}

function runnerDirectory(): string {
  const candidates = [
    process.env.CHRONOMAP_TEST_RUNNER_DIR,
    path.join(projectRoot, 'runner'),
    path.join(projectRoot, '..', 'wt-runner', 'runner'),
  ].filter((dir): dir is string => Boolean(dir));
  const found = candidates.find((dir) => existsSync(path.join(dir, 'bin', 'chronomap-runner.js')));
  if (!found) {
    throw new Error(`the scraper runner is needed for these tests; looked in ${candidates.join(', ')}`);
  }
  return found;
}

export type RealRunner = { url: string; client: RunnerClient; process: ChildProcess; stop(): Promise<void> };

/** Starts the real runner (podman sandbox) on a free loopback port and waits until it listens. */
export async function startRealRunner(t: Test, env: Record<string, string> = {}): Promise<RealRunner> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-scraper-test-'));
  const child = spawn(process.execPath, [path.join(runnerDirectory(), 'bin', 'chronomap-runner.js')], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      NODE_ENV: 'test',
      SCRAPER_API_KEY: RUNNER_KEY,
      SCRAPER_HOST: '127.0.0.1',
      SCRAPER_PORT: '0',
      SCRAPER_DATA_DIR: dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(/Server listening at (http:\/\/127\.0\.0\.1:\d+)/);
      if (match?.[1]) {
        child.stdout?.off('data', onData);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
    });
    child.on('exit', (code) =>
      reject(new Error(`the runner exited with ${code} before listening:\n${seen}`)),
    );
  });
  child.stdout?.resume();
  child.stderr?.resume();
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await stopProcess(child);
    // A runner killed with SIGKILL leaves its workspaces' tmpfs mounts (a restarted runner
    // would sweep them): unmount and remove them as it would.
    await sweepWorkspaces(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  };
  t.teardown(stop);
  return { url, client: httpRunnerClient(url, RUNNER_KEY), process: child, stop };
}

/** A python scraper using the helper library, as `npx @chronomap/scraper init` would write it. */
export function pythonRepo(script: string, manifest?: string): Record<string, string> {
  return {
    'scrapers.yml':
      manifest ??
      'scrapers:\n  - name: Events\n    slug: events\n    entrypoint: main.py\n    limits: { timeout: 60 }\n',
    'main.py': script,
  };
}

export const WRITES_TWO_ROWS = [
  'from chronomap.scraper import output',
  'print("fetching")',
  'output.write_row({"title": "Concert", "date": "2026-05-01", "latitude": 52.52, "longitude": 13.4})',
  'output.write_row({"title": "Market", "date": "2026-05-02", "latitude": 48.85, "longitude": 2.35})',
  'output.save()',
  '',
].join('\n');

/** An owner, an upload repo with `code`, synced; returns its first scraper. */
export async function syncedScraper(
  deps: ScraperDeps,
  pool: DatabasePool,
  code: Record<string, string>,
  trustLevel = 3,
) {
  const owner = await createUser(pool, trustLevel);
  const slug = `repo-${Math.random().toString(36).slice(2, 8)}`;
  const repo = await createScraperRepo(deps, owner, { name: slug, slug, sourceType: 'upload', code });
  const synced = await syncScraperRepo(deps, repo.id);
  if (synced.status !== 'synced') throw new Error(`sync failed: ${JSON.stringify(synced)}`);
  const [scraper] = await deps.scrapers.listByRepo(repo.id);
  if (!scraper) throw new Error('no scraper after sync');
  return { owner, repo, scraper };
}

export async function runnerMetrics(url: string): Promise<{ total_runs: number; active_runs: number }> {
  const response = await fetch(`${url}/metrics`);
  return (await response.json()) as { total_runs: number; active_runs: number };
}

/**
 * Waits (without a deadline of its own: tap's file timeout bounds it) until the runner reports the
 * run active, or in the given phase (`running` once its container has started).
 */
export async function untilActive(client: RunnerClient, runId: string, phase?: string): Promise<void> {
  for (;;) {
    const status = await client.status(runId);
    if (status.active && (!phase || status.phase === phase)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Removes the container of a run whose runner was killed (podman names it after the run). */
export function removeRunContainer(t: Test, runId: string): void {
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        execFile('podman', ['rm', '-f', '--ignore', `chronomap-run-${runId}`], () => resolve());
      }),
  );
}
