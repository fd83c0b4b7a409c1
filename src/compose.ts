import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { PgBoss } from 'pg-boss';
import { systemClock } from './adapters/clock/system-clock.ts';
import type { Clock } from './ports/clock.ts';
import { loadAccessPolicy } from './adapters/config/access-policy.ts';
import type { Config } from './adapters/config/environment.ts';
import { localFileStore } from './adapters/files/local-file-store.ts';
import { localSourceFiles } from './adapters/files/local-source-files.ts';
import { buildGeocoder } from './adapters/geocoding/build-geocoder.ts';
import { buildHttpApp } from './adapters/http/app.ts';
import { pgBossIngestQueue } from './adapters/jobs/ingest-worker.ts';
import { startJobQueue } from './adapters/jobs/job-queue.ts';
import { stopJobsWithProcess } from './adapters/jobs/job-stops.ts';
import { drainWithin, HTTP_DRAIN_MS } from './adapters/http/bounded-drain.ts';
import { startScheduleManager } from './adapters/jobs/schedule-manager.ts';
import { answerPrimaryMetricsRequests, servedMetricsText } from './adapters/metrics/cluster-metrics.ts';
import { type ChronomapMetrics, createMetrics } from './adapters/metrics/registry.ts';
import { createDatabasePool, type DatabasePool, redactUrl, sql } from './adapters/postgres/database.ts';
import { ensureDatabase, ensureEmbeddedCluster } from './adapters/postgres/embedded-cluster.ts';
import { primaryBounds, primaryConnectBound } from './adapters/postgres/primary-bounds.ts';
import { queryCanceller } from './adapters/postgres/query-cancellation.ts';
import { composeAccounts } from './composition/accounts.ts';
import { composeCollections } from './composition/collections.ts';
import type { Infrastructure } from './composition/infrastructure.ts';
import { composeIngest } from './composition/ingest.ts';
import { composeRead } from './composition/read.ts';
import { composeEmail } from './composition/email.ts';
import { feedsHttp } from './composition/feeds.ts';
import { composeSubscriptions } from './composition/subscriptions.ts';
import { composeScrapers } from './composition/scrapers.ts';
import { composeSite } from './composition/site.ts';

// The composition root: builds what a process shares (pools, pg-boss, metrics, the access policy,
// the ingest folder and queue, the geocoder) once, then lists the features, each composed by its
// module in src/composition/, and hands their routes and pages to the HTTP app and their workers
// to pg-boss.

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

export async function openDatabase(
  url: string,
  options: Parameters<typeof createDatabasePool>[1] = {},
): Promise<DatabasePool> {
  let pool: DatabasePool | undefined;
  try {
    pool = await createDatabasePool(url, options);
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
  /** This process's Prometheus metrics (served by the CLI on METRICS_BIND, by the API with METRICS_TOKEN). */
  metrics: ChronomapMetrics;
  close(): Promise<void>;
};

export async function composeServices(
  config: Config,
  databaseUrl: string,
  roles: { http: boolean; workers: boolean },
  // Tests pin the time (a fixed-window rate limit must not reset in the middle of a test).
  overrides: { clock?: Clock } = {},
): Promise<Services> {
  const { budgets } = config;
  // One statement_timeout per pool (docs/api.md, "Budgets, caps and limits"): the background jobs'
  // pool, the HTTP routes' pool (collections, accounts, ingest routes) and the read API's pools. In a
  // process with both roles the HTTP routes get a pool of their own; the statements of a request
  // whose client disconnects are cancelled. Each has client-side time bounds (primary-bounds.ts):
  // the HTTP routes' statements set no statement_timeout of their own, the jobs' pool runs one
  // statement with none, so it bounds its connect only.
  // The background jobs' statements are cancelled the same way when a job must stop (job-stops.ts).
  const margin = budgets.databaseTimeoutMarginMs;
  const canceller = queryCanceller(databaseUrl, { timeoutMs: margin });
  const httpPoolOptions = {
    statementTimeoutMs: budgets.collectionsStatementTimeoutMs,
    interceptors: [canceller.interceptor],
    timeBounds: primaryBounds(budgets.collectionsStatementTimeoutMs, margin),
  };
  const pool = await openDatabase(
    databaseUrl,
    roles.workers
      ? {
          statementTimeoutMs: budgets.jobsStatementTimeoutMs,
          timeBounds: primaryConnectBound(margin),
          interceptors: [canceller.interceptor],
        }
      : httpPoolOptions,
  );
  const boss = await startJobQueue(databaseUrl, roles.workers ? 'worker' : 'api', (error) => {
    // pg-boss reports lost connections here and retries by itself; log, never crash.
    process.stderr.write(`job queue: ${error.message}\n`);
  });
  // Before any worker registers: each of their jobs stops with the process (job-stops.ts).
  const jobStops = roles.workers ? stopJobsWithProcess(boss, canceller) : undefined;
  const metrics = createMetrics();
  metrics.watchPool(roles.workers ? 'jobs' : 'http', pool);
  metrics.watchDatabase(pool);
  const metricsToPrimary = answerPrimaryMetricsRequests(metrics.registry);
  const infra = processInfrastructure(config, boss, pool, metrics, overrides.clock);

  if (roles.workers) {
    const { scrapers, ingest, accounts, email, subscriptions } = composeFeatures(infra, pool);
    // In this order the schedule manager runs their periodic tasks.
    const workers = [
      scrapers.workers(),
      ingest.workers(),
      accounts.workers(),
      email.workers(),
      subscriptions.workers(),
    ];
    for (const feature of workers) await feature.start();
    // The spec's one schedule-manager-job: one worker, one cron, every feature's periodic work.
    await startScheduleManager(
      boss,
      workers.flatMap((feature) => feature.periodicTasks),
      {
        onTaskError: (task, error) =>
          process.stderr.write(`schedule manager: ${task}: ${describeCause(error)}\n`),
      },
    );
  }

  let http: FastifyInstance | undefined;
  let read: Awaited<ReturnType<typeof composeRead>> | undefined;
  let httpPool: DatabasePool | undefined;
  if (roles.http) {
    read = await composeRead(infra, databaseUrl, canceller);
    httpPool = roles.workers ? await createDatabasePool(databaseUrl, httpPoolOptions) : undefined;
    if (httpPool) metrics.watchPool('http', httpPool);
    const { collections, site, accounts, ingest, scrapers, email, subscriptions } = composeFeatures(
      infra,
      httpPool ?? pool,
    );
    const { login, csrfSecret, collections: collectionUseCases } = accounts.httpDeps();
    http = await buildHttpApp(
      {
        version: VERSION,
        publicBaseUrl: config.publicBaseUrl,
        // In the order their routes register, which is the OpenAPI document's order of paths (and
        // their hooks' order, which is that of the document's shared schemas): here, not inside
        // one feature's routes, is where the features' routes interleave.
        features: [
          site.http({ replicas: read.replicas, csrfSecret, email: email.outboxStatus }),
          read.http(),
          feedsHttp({ views: site.views, events: read.events, pool: read.pool, clock: infra.clock }),
          ingest.http({ triggerScraperWebhook: scrapers.triggers.triggerWebhook, csrfSecret }),
          site.adminHttp(),
          accounts.dataExportsHttp(),
          ingest.wizardHttp(),
          accounts.http(),
          collections.http(collectionUseCases),
          accounts.quotasHttp(),
          accounts.apiKeysHttp(),
          site.flagsHttp(),
          scrapers.http({ login, csrfSecret }),
          subscriptions.http(csrfSecret),
          email.http({ csrfSecret }),
        ],
        queryScopes: canceller,
        metrics: { metrics, token: config.metricsToken, text: servedMetricsText(metrics.registry) },
        ...(read.readYourWrites ? { readYourWrites: read.readYourWrites } : {}),
      },
      {
        logLevel: config.logLevel,
        bodyLimitBytes: config.bodyLimitBytes,
        trustProxy: config.trustProxy,
        timeouts: budgets,
        corsOrigins: config.corsOrigins,
      },
    );
  }

  return {
    pool,
    boss,
    metrics,
    ...(http ? { http } : {}),
    // Bounded (issue 32 §2): the running jobs stop (job-stops.ts, at most JOB_STOP_GRACE_MS +
    // JOB_CANCEL_WAIT_MS) while the HTTP requests in flight drain (at most HTTP_DRAIN_MS), then
    // pg-boss stops with no job of this process still running.
    async close() {
      const jobsStopping = jobStops?.stop();
      const cut = http ? await drainWithin(http) : false;
      if (cut) process.stderr.write(`shutdown: responses still running after ${HTTP_DRAIN_MS} ms were cut\n`);
      const jobs = await jobsStopping;
      if (jobs && jobs.running > 0)
        infra.log(
          `shutdown: ${jobs.running} running job(s) stopped` +
            (jobs.cancelled ? `, ${jobs.cancelled} by cancelling their statements` : '') +
            (jobs.stillRunning ? `, ${jobs.stillRunning} still busy outside the database` : ''),
        );
      await boss.stop({ graceful: true, timeout: 1_000 });
      await read?.close();
      await httpPool?.end();
      await pool.end();
      // What this process counted, to the primary a last time (several API processes).
      await metricsToPrimary.flush();
    },
  };
}

/** What a process builds once and every feature is handed, whichever pool it is composed on. */
export function processInfrastructure(
  config: Config,
  boss: PgBoss,
  pool: DatabasePool,
  metrics: ChronomapMetrics,
  clock: Clock = systemClock,
): Infrastructure {
  const ingestRoot = path.join(config.dataDir, 'ingest');
  return {
    config,
    version: VERSION,
    boss,
    clock,
    metrics,
    log: (line) => {
      if (config.logLevel !== 'silent') process.stdout.write(`${line}\n`);
    },
    policy: loadAccessPolicy(config.quotasFile),
    ingestFiles: { fileStore: localFileStore(ingestRoot), sourceFiles: localSourceFiles(ingestRoot) },
    ingestQueue: pgBossIngestQueue(boss),
    // On the process's first pool, which holds the geocoder's cache of answers.
    geocoder: buildGeocoder(config.ingest.geocoder, pool),
  };
}

/**
 * The features whose adapters live on one pool, each built once on it, in the order they depend on
 * each other: the jobs' pool for the workers, the HTTP routes' pool for the routes and pages.
 */
export function composeFeatures(infra: Infrastructure, on: DatabasePool) {
  const collections = composeCollections(on);
  const site = composeSite(infra, on, { collections });
  const accounts = composeAccounts(infra, on, {
    repository: collections.repository,
    flags: site.flags,
    notices: site.notices,
  });
  const ingest = composeIngest(infra, on, { repository: collections.repository, quotas: accounts.quotas });
  const scrapers = composeScrapers(infra, on, {
    repository: collections.repository,
    flags: site.flagCheck,
    quotas: accounts.quotas,
    ingest: ingest.scraperImport,
  });
  const email = composeEmail(infra, on);
  // A subscription's e-mail channel queues its digests in the e-mail feature's outbox.
  const subscriptions = composeSubscriptions(infra, on, {
    views: site.views,
    digests: email.digests,
    confirmedAddresses: async (userId) =>
      (await email.email.list(userId)).flatMap((a) =>
        a.confirmed ? [{ id: a.id, address: a.address }] : [],
      ),
  });
  return { collections, site, accounts, ingest, scrapers, email, subscriptions };
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
