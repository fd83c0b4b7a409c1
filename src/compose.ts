import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { PgBoss } from 'pg-boss';
import { systemClock } from './adapters/clock/system-clock.ts';
import { localFileStore } from './adapters/files/local-file-store.ts';
import { localSourceFiles } from './adapters/files/local-source-files.ts';
import { buildGeocoder } from './adapters/geocoding/build-geocoder.ts';
import { loadAccessPolicy } from './adapters/config/access-policy.ts';
import {
  type Config,
  missingVariables,
  projectRoot,
  resolveSessionSecret,
} from './adapters/config/environment.ts';
import type { AccountsDeps } from './adapters/http/accounts/account-hooks.ts';
import { buildHttpApp } from './adapters/http/app.ts';
import { adminPages } from './adapters/pages/pages.ts';
import { guardedUrlFetcher } from './adapters/fetch/guarded-url-fetcher.ts';
import { cronerSchedule } from './adapters/jobs/croner-schedule.ts';
import {
  deferredCountsTask,
  pgBossIngestQueue,
  startCountsRefreshWorker,
  startIngestWorker,
} from './adapters/jobs/ingest-worker.ts';
import { startScheduleManager } from './adapters/jobs/schedule-manager.ts';
import {
  pgBossScheduleQueue,
  scheduledIngestsTask,
  startScheduleWorkers,
} from './adapters/jobs/schedule-workers.ts';
import { startJobQueue } from './adapters/jobs/job-queue.ts';
import { pgBossScraperJobs, startScraperWorkers } from './adapters/jobs/scraper-jobs.ts';
import { queryCanceller } from './adapters/postgres/query-cancellation.ts';
import { createDatabasePool, type DatabasePool, redactUrl, sql } from './adapters/postgres/database.ts';
import { postgresDatabaseStatus } from './adapters/postgres/site/database-status.ts';
import { ensureDatabase, ensureEmbeddedCluster } from './adapters/postgres/embedded-cluster.ts';
import { pageCache, postgresEventExporter, postgresEventReader } from './adapters/postgres/read/index.ts';
import type { ReadYourWrites } from './adapters/http/read-your-writes.ts';
import {
  openReplicaSet,
  readContext,
  type ReplicaSet,
  routedReader,
} from './adapters/postgres/read-replicas.ts';
import { postgresIngestStore } from './adapters/postgres/ingest/ingest-store.ts';
import { postgresScheduleStore } from './adapters/postgres/ingest/schedule-store.ts';
import { postgresImportListings } from './adapters/postgres/ingest/import-listings.ts';
import { postgresIngestDrafts } from './adapters/postgres/ingest/ingest-drafts.ts';
import { previewFetchLimits } from './adapters/fetch/preview-fetch-limits.ts';
import { pgBossJobQueueStatus } from './adapters/jobs/job-queue-status.ts';
import { postgresSiteSettings } from './adapters/postgres/site/site-settings.ts';
import { guardedNewsletterPoster } from './adapters/fetch/newsletter-poster.ts';
import {
  postgresDataExportStore,
  postgresUserDataReader,
} from './adapters/postgres/accounts/data-export-store.ts';
import { localExportArchive } from './adapters/files/export-archive.ts';
import { pgBossDataExportQueue, startDataExportWorker } from './adapters/jobs/data-export-jobs.ts';
import { removeExpiredExports, type DataExportDeps } from './application/accounts/export-own-data.ts';
import { removeExpiredDrafts } from './application/ingest/import-wizard.ts';
import { loadMigrations } from './adapters/postgres/migrator.ts';
import { httpRunnerStatus } from './adapters/runner/runner-health.ts';
import { webhookTokens } from './adapters/security/webhook-tokens.ts';
import { postgresCollectionRepository } from './adapters/postgres/collections/collection-repository.ts';
import { postgresFeatureFlagStore } from './adapters/postgres/site/feature-flag-store.ts';
import { postgresQuotas } from './adapters/postgres/accounts/quotas.ts';
import { postgresRateLimitCounter } from './adapters/postgres/accounts/rate-limit-counter.ts';
import { postgresSessionStore } from './adapters/postgres/accounts/session-store.ts';
import { postgresUserStore } from './adapters/postgres/accounts/user-store.ts';
import { hmacTokenSigner } from './adapters/security/hmac-token-signer.ts';
import { scryptPasswordHasher } from './adapters/security/scrypt-password-hasher.ts';
import { isFeatureEnabled } from './application/site/feature-flags.ts';
import type { AccessPolicy } from './domain/accounts/quotas.ts';
import type { Quotas } from './ports/accounts/quotas.ts';
import { postgresActorDirectory } from './adapters/postgres/accounts/actor-directory.ts';
import { postgresScraperRepoStore } from './adapters/postgres/scrapers/scraper-repo-store.ts';
import { postgresScraperRunStore } from './adapters/postgres/scrapers/scraper-run-store.ts';
import { postgresScraperStore } from './adapters/postgres/scrapers/scraper-store.ts';
import { httpRunnerClient } from './adapters/runner/runner-client.ts';
import { answerPrimaryMetricsRequests } from './adapters/metrics/cluster-metrics.ts';
import { meteredGeocoder, meteredIngestStore, meteredRunnerClient } from './adapters/metrics/instrument.ts';
import { type ChronomapMetrics, createMetrics } from './adapters/metrics/registry.ts';
import { gitManifestReader } from './adapters/scrapers/git-manifest-reader.ts';
import { uuidRunIds } from './adapters/scrapers/scraper-support.ts';
import { yamlManifestSource } from './adapters/scrapers/yaml-manifest-source.ts';
import { cleanUpStuckRuns } from './application/scrapers/clean-up-stuck-runs.ts';
import { executeScraperRun } from './application/scrapers/execute-scraper-run.ts';
import { scraperCsvImport } from './application/ingest/import-scraper-csv.ts';
import { requestRepoSync } from './application/scrapers/request-repo-sync.ts';
import { scheduleDueScrapers } from './application/scrapers/schedule-due-scrapers.ts';
import type { ScraperDeps } from './application/scrapers/scraper-deps.ts';
import { syncScraperRepo } from './application/scrapers/sync-scraper-repo.ts';
import { triggerScraperRun } from './application/scrapers/trigger-scraper-run.ts';
import { triggerScraperWebhook } from './application/scrapers/trigger-scraper-webhook.ts';

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
): Promise<Services> {
  const { budgets } = config;
  // One statement_timeout per pool (docs/api.md, "Budgets, caps and limits"): the background jobs'
  // pool, the HTTP routes' pool (collections, accounts, ingest routes) and the read API's pools. In a
  // process with both roles the HTTP routes get a pool of their own; the statements of a request
  // whose client disconnects are cancelled.
  const canceller = roles.http ? queryCanceller(databaseUrl) : undefined;
  const httpPoolOptions = {
    statementTimeoutMs: budgets.collectionsStatementTimeoutMs,
    interceptors: canceller ? [canceller.interceptor] : [],
  };
  const pool = await openDatabase(
    databaseUrl,
    roles.workers ? { statementTimeoutMs: budgets.jobsStatementTimeoutMs } : httpPoolOptions,
  );
  const migrations = loadMigrations();
  const boss = await startJobQueue(databaseUrl, roles.workers ? 'worker' : 'api', (error) => {
    // pg-boss reports lost connections here and retries by itself; log, never crash.
    process.stderr.write(`job queue: ${error.message}\n`);
  });

  const ingestRoot = path.join(config.dataDir, 'ingest');
  const ingestQueue = pgBossIngestQueue(boss);
  // The one place that names where ingest files live (FileStore writes them, SourceFiles reads them).
  const fileStore = localFileStore(ingestRoot);
  const sourceFiles = localSourceFiles(ingestRoot);
  // config/quotas.yaml is read once per process; every area and every pool asks the same policy.
  const policy = loadAccessPolicy(config.quotasFile);
  const workerLog = (line: string) => {
    if (config.logLevel !== 'silent') process.stdout.write(`${line}\n`);
  };
  const metrics = createMetrics();
  metrics.watchPool(roles.workers ? 'jobs' : 'http', pool);
  metrics.watchQueues(pool);
  answerPrimaryMetricsRequests(metrics.registry);
  const { ingestStore, quotaSeam, quotas, scheduleDeps, scrapers } = poolDeps(config, pool, boss, policy);
  const dataExportsOn = (on: DatabasePool): DataExportDeps => ({
    exports: postgresDataExportStore(on),
    queue: pgBossDataExportQueue(boss),
    reader: postgresUserDataReader(on),
    archive: localExportArchive(path.join(config.dataDir, 'exports')),
    clock: systemClock,
  });
  if (roles.workers) {
    const meteredScrapers = {
      ...scrapers,
      runner: scrapers.runner && meteredRunnerClient(scrapers.runner, metrics),
    };
    const geocoder = buildGeocoder(config.ingest.geocoder, pool);
    await startDataExportWorker(boss, dataExportsOn(pool));
    await startScheduleWorkers(
      boss,
      {
        ...scheduleDeps,
        fetcher: guardedUrlFetcher(config.ingest.fetch),
        files: fileStore,
        ingestQueue,
      },
      workerLog,
    );
    await startIngestWorker(
      boss,
      {
        store: meteredIngestStore(ingestStore, metrics),
        files: sourceFiles,
        geocoder: geocoder && meteredGeocoder(geocoder, metrics),
        queue: ingestQueue,
        clock: systemClock,
        retry: config.ingest.retry,
        batchSize: config.ingest.batchSize,
        deferCountsMinRows: config.ingest.deferCountsMinRows,
        deferredWriters: config.ingest.deferredWriters,
        countsRefresh: ingestQueue,
        quotas,
      },
      { concurrency: config.ingest.concurrency, log: workerLog },
    );
    await startCountsRefreshWorker(boss, { store: ingestStore, countsRefresh: ingestQueue }, workerLog);
    await startScraperWorkers(boss, {
      executeRun: (runId) => executeScraperRun(meteredScrapers, runId),
      syncRepo: (repoId) => syncScraperRepo(scrapers, repoId),
    });
    // The spec's one schedule-manager-job: one worker, one cron, every feature's periodic work.
    await startScheduleManager(
      boss,
      [
        { name: 'scraper schedules', run: () => scheduleDueScrapers(scrapers) },
        { name: 'stuck scraper runs', run: () => cleanUpStuckRuns(scrapers) },
        scheduledIngestsTask(scheduleDeps, workerLog),
        deferredCountsTask({ store: ingestStore, countsRefresh: ingestQueue }, workerLog),
        { name: 'expired data exports', run: () => removeExpiredExports(dataExportsOn(pool)) },
        {
          name: 'expired uploads',
          run: () =>
            removeExpiredDrafts({ drafts: postgresIngestDrafts(pool), fileStore, clock: systemClock }),
        },
      ],
      {
        onTaskError: (task, error) =>
          process.stderr.write(`schedule manager: ${task}: ${describeCause(error)}\n`),
      },
    );
  }

  let http: FastifyInstance | undefined;
  // The /events page statements whose generic plan is as good as a custom one, planned once per
  // connection (postgres/read/page.ts; pageAnswer in adapters/postgres/read/answer-path.ts); a few
  // connections more per HTTP process.
  let genericPlanPool: DatabasePool | undefined;
  let readPool: DatabasePool | undefined;
  let httpPool: DatabasePool | undefined;
  let replicas: ReplicaSet | undefined;
  if (roles.http) {
    const readPoolOptions = {
      statementTimeoutMs: budgets.readStatementTimeoutMs,
      interceptors: canceller ? [canceller.interceptor] : [],
    };
    readPool = await createDatabasePool(databaseUrl, { ...readPoolOptions, maximumPoolSize: 8 });
    genericPlanPool = await createDatabasePool(databaseUrl, {
      ...readPoolOptions,
      maximumPoolSize: 5,
      genericPlans: true,
    });
    httpPool = roles.workers ? await createDatabasePool(databaseUrl, httpPoolOptions) : undefined;
    metrics.watchPool('read', readPool);
    metrics.watchPool('read-generic', genericPlanPool);
    if (httpPool) metrics.watchPool('http', httpPool);
    const readerOn = (pools: { pool: DatabasePool; genericPlanPool: DatabasePool }) => {
      const answers = config.readCacheBytes > 0 ? pageCache(pools.pool, config.readCacheBytes) : undefined;
      if (answers) metrics.watchAnswerCache(() => answers.usage());
      return postgresEventReader(pools.pool, {
        ...(answers ? { pageCache: answers } : {}),
        genericPlanPool: pools.genericPlanPool,
      });
    };
    const primaryReader = readerOn({ pool: readPool, genericPlanPool });
    replicas =
      config.databaseReadUrls.length > 0
        ? await openReplicaSet({
            primary: readPool,
            urls: config.databaseReadUrls,
            maxLagBytes: config.replicaMaxLagBytes,
            statementTimeoutMs: budgets.readStatementTimeoutMs,
            log: workerLog,
          })
        : undefined;
    for (const [name, set] of replicas?.pools ?? []) metrics.watchPool(name, set.pool);
    // One read model for /api/v1, its vector tiles and /ogc (they share its answer cache and
    // remembered scopes): on the primary, or routed over the replicas.
    const countRead = (target: string) => metrics.readTarget.inc({ target });
    const reader = replicas ? routedReader(replicas, primaryReader, readerOn, countRead) : primaryReader;
    // The exports of /api/v1 read where its pages do.
    const primaryExporter = postgresEventExporter(readPool);
    const exporter = replicas
      ? routedReader(replicas, primaryExporter, ({ pool }) => postgresEventExporter(pool), countRead)
      : primaryExporter;
    const routes = httpPool
      ? poolDeps(config, httpPool, boss, policy)
      : { ingestStore, quotaSeam, quotas, scheduleDeps, scrapers };
    const routesPool = httpPool ?? pool;
    const accounts = composeAccounts(config, routesPool, routes.quotaSeam);
    const ingestDeps = {
      store: routes.ingestStore,
      queue: ingestQueue,
      quotas: routes.quotas,
      clock: systemClock,
      retry: config.ingest.retry,
      fileStore,
      files: sourceFiles,
      maxFileSizeBytes: config.ingest.maxFileSizeBytes,
      hierarchy: accounts.collections.repository,
      schedules: routes.scheduleDeps,
      geocoder: buildGeocoder(config.ingest.geocoder, pool),
      wizard: {
        drafts: postgresIngestDrafts(routesPool),
        store: routes.ingestStore,
        queue: ingestQueue,
        quotas: routes.quotas,
        hierarchy: accounts.collections.repository,
        files: sourceFiles,
        fileStore,
        clock: systemClock,
      },
    };
    const importDeps = {
      listings: postgresImportListings(routesPool),
      urlPreview: {
        fetcher: guardedUrlFetcher(previewFetchLimits(config.ingest.fetch)),
        fileStore,
        files: sourceFiles,
      },
      adminJobs: {
        jobs: pgBossJobQueueStatus(boss, routesPool),
        cron: cronerSchedule,
        clock: systemClock,
        production: config.nodeEnv === 'production',
      },
      notices: {
        settings: postgresSiteSettings(routesPool),
        newsletter: guardedNewsletterPoster({
          timeoutMs: 5_000,
          allowPrivateAddresses: config.ingest.fetch.allowPrivateAddresses,
        }),
        repository: accounts.collections.repository,
      },
      dataExports: dataExportsOn(routesPool),
    };
    http = await buildHttpApp(
      {
        version: VERSION,
        health: {
          database: postgresDatabaseStatus(routesPool, migrations),
          environment: { missingVariables: () => missingVariables(config) },
          runner: config.scraperRunnerUrl ? httpRunnerStatus(config.scraperRunnerUrl) : undefined,
          replicas,
        },
        readApi: { events: reader, exporter },
        tiles: { tiles: reader },
        ogc: { events: reader, clock: systemClock },
        ingest: ingestDeps,
        imports: importDeps,
        accounts,
        explore: {
          root: projectRoot,
          tileUrl: config.mapTileUrl,
          tileAttribution: config.mapTileAttribution,
        },
        scrapers: {
          triggerRun: (actor, scraperId) => triggerScraperRun(routes.scrapers, actor, scraperId),
          triggerWebhook: (token) => triggerScraperWebhook(routes.scrapers, token),
          requestSync: (actor, repoId) => requestRepoSync(routes.scrapers, actor, repoId),
        },
        scraperCollections: { repository: accounts.collections.repository, scrapers: routes.scrapers },
        ...(canceller ? { queryScopes: canceller } : {}),
        metrics: { metrics, token: config.metricsToken },
        ...(replicas ? { readYourWrites: readYourWritesOn(replicas) } : {}),
      },
      {
        logLevel: config.logLevel,
        bodyLimitBytes: config.bodyLimitBytes,
        trustProxy: config.trustProxy,
        timeouts: budgets,
        corsOrigins: config.corsOrigins,
      },
    );
    // After the app's hooks, which tell the pages who is calling.
    await http.register(adminPages, {
      ...accounts,
      ingest: { store: routes.ingestStore, clock: systemClock },
      imports: { ingest: ingestDeps, listings: importDeps.listings },
      legalNotices: { settings: postgresSiteSettings(routesPool) },
      scraperCollections: { repository: accounts.collections.repository, scrapers: routes.scrapers },
    });
  }

  return {
    pool,
    boss,
    metrics,
    ...(http ? { http } : {}),
    async close() {
      await http?.close();
      await boss.stop({ graceful: true, timeout: 10_000 });
      await replicas?.close();
      await genericPlanPool?.end();
      await readPool?.end();
      await httpPool?.end();
      await pool.end();
    },
  };
}

/** Read-your-writes over the replica set: the request's read context and the primary's position. */
function readYourWritesOn(replicas: ReplicaSet): ReadYourWrites {
  return {
    enter: (mustHave, next) => readContext.run({ mustHave }, next),
    primaryPosition: () => replicas.primaryPosition(),
  };
}

/** The access policy (config/quotas.yaml, read here) and the one Quotas seam over it. */
export type QuotaSeam = { policy: AccessPolicy; quotas: Quotas };

/** For any process (workers included): limits from the quotas file, usage in Postgres. */
export function composeQuotas(config: Config, pool: DatabasePool): QuotaSeam {
  return quotaSeamOn(pool, loadAccessPolicy(config.quotasFile));
}

function quotaSeamOn(pool: DatabasePool, policy: AccessPolicy): QuotaSeam {
  return { policy, quotas: postgresQuotas(pool, policy, systemClock) };
}

/** The adapters built on one pool that both the workers and the HTTP routes use. */
function poolDeps(config: Config, pool: DatabasePool, boss: PgBoss, policy: AccessPolicy) {
  const ingestStore = postgresIngestStore(pool);
  const quotaSeam = quotaSeamOn(pool, policy);
  const { quotas } = quotaSeam;
  const scheduleDeps = {
    schedules: postgresScheduleStore(pool),
    store: ingestStore,
    cron: cronerSchedule,
    tokens: webhookTokens,
    queue: pgBossScheduleQueue(boss),
    quotas,
    clock: systemClock,
    hierarchy: postgresCollectionRepository(pool),
  };
  const scrapers = composeScraperDeps(config, pool, boss, quotaSeam);
  return { ingestStore, quotaSeam, quotas, scheduleDeps, scrapers };
}

/** Accounts, sessions, access policy, quotas and rate limits, all kept in Postgres. */
export function composeAccounts(
  config: Config,
  pool: DatabasePool,
  { policy, quotas }: QuotaSeam = composeQuotas(config, pool),
): AccountsDeps {
  const users = postgresUserStore(pool);
  const sessions = postgresSessionStore(pool);
  const passwords = scryptPasswordHasher();
  const secret = resolveSessionSecret(config);
  const rateLimits = postgresRateLimitCounter(pool);
  return {
    login: {
      users,
      sessions,
      passwords,
      tokens: hmacTokenSigner(secret),
      rateLimits,
      policy,
      clock: systemClock,
    },
    account: { users, sessions, passwords, rateLimits, policy, clock: systemClock },
    flags: postgresFeatureFlagStore(pool),
    quotas,
    collections: {
      repository: postgresCollectionRepository(pool),
      passwords,
      sessions,
      quotas,
      defaultTrustLevel: policy.defaultTrustLevel,
    },
    csrfSecret: secret,
  };
}

/**
 * The scraper subsystem's adapters: the flag is the admin's feature-flag store, the quotas are the
 * one Quotas seam's, and auto-import hands the CSV to the ingestion pipeline.
 */
export function composeScraperDeps(
  config: Config,
  pool: DatabasePool,
  boss: PgBoss,
  { quotas }: QuotaSeam = composeQuotas(config, pool),
): ScraperDeps {
  const repos = postgresScraperRepoStore(pool);
  return {
    repos,
    scrapers: postgresScraperStore(pool),
    runs: postgresScraperRunStore(pool),
    runner:
      config.scraperRunnerUrl && config.scraperApiKey
        ? httpRunnerClient(config.scraperRunnerUrl, config.scraperApiKey)
        : null,
    jobs: pgBossScraperJobs(boss),
    // The admin's switch (PATCH /api/feature-flags), read on every check so it takes effect at once.
    flags: { isEnabled: (flag) => isFeatureEnabled(postgresFeatureFlagStore(pool), flag) },
    quotas,
    ingest: scraperCsvImport({
      store: postgresIngestStore(pool),
      queue: pgBossIngestQueue(boss),
      // The same quotas as uploads: the auto-import counts against the scraper owner's quotas.
      quotas,
      files: localFileStore(path.join(config.dataDir, 'ingest')),
    }),
    actors: postgresActorDirectory(pool),
    tokens: webhookTokens,
    manifests: yamlManifestSource(gitManifestReader({ allowLoopback: config.scraperAllowLoopbackGit })),
    cron: cronerSchedule,
    runIds: uuidRunIds(),
    clock: systemClock,
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
