import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { PgBoss } from 'pg-boss';
import { type Config, missingVariables } from './adapters/config/environment.ts';
import { buildHttpApp } from './adapters/http/app.ts';
import { startJobQueue } from './adapters/jobs/job-queue.ts';
import { pgBossScraperJobs, startScraperWorkers } from './adapters/jobs/scraper-jobs.ts';
import { createDatabasePool, type DatabasePool, redactUrl, sql } from './adapters/postgres/database.ts';
import { postgresDatabaseStatus } from './adapters/postgres/database-status.ts';
import { ensureDatabase, ensureEmbeddedCluster } from './adapters/postgres/embedded-cluster.ts';
import { loadMigrations } from './adapters/postgres/migrator.ts';
import {
  postgresActorDirectory,
  postgresScraperQuotaGate,
} from './adapters/postgres/scraper-collaborators.ts';
import { postgresScraperRepoStore } from './adapters/postgres/scraper-repo-store.ts';
import { postgresScraperRunStore } from './adapters/postgres/scraper-run-store.ts';
import { postgresScraperStore } from './adapters/postgres/scraper-store.ts';
import { httpRunnerClient } from './adapters/runner/runner-client.ts';
import { httpRunnerStatus } from './adapters/runner/runner-health.ts';
import { cronerCalendar } from './adapters/scrapers/croner-calendar.ts';
import { gitManifestReader } from './adapters/scrapers/git-manifest-reader.ts';
import {
  cryptoWebhookTokens,
  environmentFeatureFlags,
  ingestionNotInstalled,
  uuidRunIds,
} from './adapters/scrapers/scraper-support.ts';
import { yamlManifestSource } from './adapters/scrapers/yaml-manifest-source.ts';
import { cleanUpStuckRuns } from './application/scrapers/clean-up-stuck-runs.ts';
import { executeScraperRun } from './application/scrapers/execute-scraper-run.ts';
import { requestRepoSync } from './application/scrapers/request-repo-sync.ts';
import { scheduleDueScrapers } from './application/scrapers/schedule-due-scrapers.ts';
import type { ScraperDeps } from './application/scrapers/scraper-deps.ts';
import { syncScraperRepo } from './application/scrapers/sync-scraper-repo.ts';
import { triggerScraperRun } from './application/scrapers/trigger-scraper-run.ts';

// The composition root: the only module that knows every adapter. It builds the pool, pg-boss, the
// adapters and the use cases, and hands them to the HTTP app and the workers.

export const VERSION: string = (createRequire(import.meta.url)('../package.json') as { version: string })
  .version;

export class DatabaseUnavailableError extends Error {
  constructor(url: string, cause: unknown) {
    super(`cannot connect to PostgreSQL at ${redactUrl(url)}: ${describeCause(cause)}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

/** The database URL to use: DATABASE_URL, or the embedded cluster under the data directory. */
export async function resolveDatabaseUrl(config: Config, log: (line: string) => void): Promise<string> {
  if (config.databaseUrl) return config.databaseUrl;
  const cluster = await ensureEmbeddedCluster({ dataDir: path.join(config.dataDir, 'postgres'), log });
  await ensureDatabase(cluster.url('postgres'), 'chronomap');
  return cluster.url('chronomap');
}

export async function openDatabase(url: string): Promise<DatabasePool> {
  let pool: DatabasePool | undefined;
  try {
    pool = await createDatabasePool(url);
    await pool.query(sql.unsafe`select 1`);
    return pool;
  } catch (error) {
    await pool?.end().catch(() => {});
    throw new DatabaseUnavailableError(url, error);
  }
}

export type Services = {
  pool: DatabasePool;
  boss: PgBoss;
  http?: FastifyInstance;
  close(): Promise<void>;
};

export async function composeServices(
  config: Config,
  databaseUrl: string,
  roles: { http: boolean; workers: boolean },
): Promise<Services> {
  const pool = await openDatabase(databaseUrl);
  const migrations = loadMigrations();
  const boss = await startJobQueue(databaseUrl, roles.workers ? 'worker' : 'api', (error) => {
    // pg-boss reports lost connections here and retries by itself; log, never crash.
    process.stderr.write(`job queue: ${error.message}\n`);
  });

  const scrapers = composeScraperDeps(config, pool, boss);
  if (roles.workers) {
    await startScraperWorkers(boss, {
      executeRun: (runId) => executeScraperRun(scrapers, runId),
      syncRepo: (repoId) => syncScraperRepo(scrapers, repoId),
      scheduleManagerTasks: [
        { name: 'scraper schedules', run: () => scheduleDueScrapers(scrapers) },
        { name: 'stuck scraper runs', run: () => cleanUpStuckRuns(scrapers) },
      ],
      onTaskError: (task, error) =>
        process.stderr.write(`schedule manager: ${task}: ${describeCause(error)}\n`),
    });
  }

  let http: FastifyInstance | undefined;
  if (roles.http) {
    http = await buildHttpApp(
      {
        version: VERSION,
        health: {
          database: postgresDatabaseStatus(pool, migrations),
          environment: { missingVariables: () => missingVariables(config) },
          runner: config.scraperRunnerUrl ? httpRunnerStatus(config.scraperRunnerUrl) : undefined,
        },
        scrapers: {
          triggerRun: (actor, scraperId) => triggerScraperRun(scrapers, actor, scraperId),
          requestSync: (actor, repoId) => requestRepoSync(scrapers, actor, repoId),
        },
      },
      { logLevel: config.logLevel, bodyLimitBytes: config.bodyLimitBytes },
    );
  }

  return {
    pool,
    boss,
    ...(http ? { http } : {}),
    async close() {
      await http?.close();
      await boss.stop({ graceful: true, timeout: 10_000 });
      await pool.end();
    },
  };
}

/**
 * The scraper subsystem's adapters. Stand-ins until other work lands (docs/scrapers.md, "Wiring"):
 * the flag comes from CHRONOMAP_ENABLE_SCRAPERS, quotas are counted on the scraper tables, and
 * auto-import reports that the ingestion pipeline is not installed.
 */
export function composeScraperDeps(config: Config, pool: DatabasePool, boss: PgBoss): ScraperDeps {
  return {
    repos: postgresScraperRepoStore(pool),
    scrapers: postgresScraperStore(pool),
    runs: postgresScraperRunStore(pool),
    runner:
      config.scraperRunnerUrl && config.scraperApiKey
        ? httpRunnerClient(config.scraperRunnerUrl, config.scraperApiKey)
        : null,
    jobs: pgBossScraperJobs(boss),
    flags: environmentFeatureFlags(config.enableScrapers),
    quotas: postgresScraperQuotaGate(pool),
    ingest: ingestionNotInstalled(),
    actors: postgresActorDirectory(pool),
    tokens: cryptoWebhookTokens(),
    manifests: yamlManifestSource(gitManifestReader({ allowLoopback: config.scraperAllowLoopbackGit })),
    cron: cronerCalendar(),
    runIds: uuidRunIds(),
    now: () => new Date(),
  };
}

function describeCause(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  while (current instanceof Error && parts.length < 4) {
    if (current.message && !parts.includes(current.message)) parts.push(current.message);
    current = current.cause;
  }
  return parts.join(': ') || String(error);
}
