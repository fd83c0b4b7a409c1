import type { BackgroundExports } from '../application/read/background-exports.ts';
import { type DownloadFormat, exportEvents } from '../application/read/export-events.ts';
import {
  pgBossExportJobQueue,
  startViewExportWorker,
  VIEW_EXPORT_QUEUES,
} from '../adapters/jobs/view-export-jobs.ts';
import { postgresExportJobStore } from '../adapters/postgres/read/index.ts';
import type { EventReader } from '../ports/read/event-reader.ts';
import type { TileReader } from '../ports/read/tile-reader.ts';
import type { EventExporter } from '../ports/read/event-exporter.ts';
import type { ExportFileStore } from '../ports/read/export-files.ts';
import { exportEncoders } from '../adapters/files/export-encoders.ts';
import { localExportFileStore } from '../adapters/files/export-file-store.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import type { ReadYourWrites } from '../adapters/http/read-your-writes.ts';
import { readHttp } from '../adapters/http/read/read-http.ts';
import { createDatabasePool, type DatabasePool } from '../adapters/postgres/database.ts';
import { watchReplicaLag } from '../adapters/metrics/replica-metrics.ts';
import { primaryBounds } from '../adapters/postgres/primary-bounds.ts';
import type { QueryCanceller } from '../adapters/postgres/query-cancellation.ts';
import {
  EXPORT_SNAPSHOTS,
  LONGEST_READ_STATEMENT_MS,
  pageCache,
  postgresEventExporter,
  postgresEventProvenance,
  postgresEventReader,
} from '../adapters/postgres/read/index.ts';
import { postgresChangeFeed } from '../adapters/postgres/read/index.ts';
import type { ChangeFeed } from '../ports/read/change-feed.ts';
import {
  openReplicaSet,
  readContext,
  type ReplicaSet,
  routedReader,
} from '../adapters/postgres/read-replicas.ts';
import type { Infrastructure } from './infrastructure.ts';

// The public read API (/api/v1, its vector tiles and exports, /ogc) on pools of its own: one read
// model on the primary, or routed over the read replicas (DATABASE_READ_URLS). HTTP processes only.

export async function composeRead(
  infra: Pick<Infrastructure, 'config' | 'clock' | 'metrics' | 'log' | 'boss'>,
  databaseUrl: string,
  canceller: QueryCanceller | undefined,
) {
  const { config, metrics } = infra;
  const { readStatementTimeoutMs, databaseTimeoutMarginMs } = config.budgets;
  // Short reads: no parallel workers unless READ_PARALLEL_WORKERS asks for them (their start
  // costs more than these statements; docs/performance.md, "Parallel workers").
  const parallelWorkers = config.readParallelWorkers;
  const readPoolOptions = {
    statementTimeoutMs: readStatementTimeoutMs,
    parallelWorkers,
    interceptors: canceller ? [canceller.interceptor] : [],
    timeBounds: primaryBounds(readStatementTimeoutMs, databaseTimeoutMarginMs),
  };
  // The read pool runs an export's pass over the CSV data keys too, which sets a longer
  // statement_timeout for itself (export-columns.ts): its bound covers that.
  const readPool = await createDatabasePool(databaseUrl, {
    ...readPoolOptions,
    maximumPoolSize: 8,
    timeBounds: primaryBounds(
      Math.max(readStatementTimeoutMs, LONGEST_READ_STATEMENT_MS),
      databaseTimeoutMarginMs,
    ),
  });
  // The /events page statements whose generic plan is as good as a custom one, planned once per
  // connection (postgres/read/page.ts; pageAnswer in adapters/postgres/read/answer-path.ts); a few
  // connections more per HTTP process.
  const genericPlanPool = await createDatabasePool(databaseUrl, {
    ...readPoolOptions,
    maximumPoolSize: 5,
    genericPlans: true,
  });
  metrics.watchPool('read', readPool);
  metrics.watchPool('read-generic', genericPlanPool);
  const readerOn = (pools: { pool: DatabasePool; genericPlanPool: DatabasePool }) => {
    const answers = config.readCacheBytes > 0 ? pageCache(pools.pool, config.readCacheBytes) : undefined;
    if (answers) metrics.watchAnswerCache(() => answers.usage());
    return postgresEventReader(pools.pool, {
      ...(answers ? { pageCache: answers } : {}),
      genericPlanPool: pools.genericPlanPool,
    });
  };
  const primaryReader = readerOn({ pool: readPool, genericPlanPool });
  const replicas: ReplicaSet | undefined =
    config.databaseReadUrls.length > 0
      ? await openReplicaSet({
          primary: readPool,
          urls: config.databaseReadUrls,
          maxLagSeconds: config.replicaMaxLagSeconds,
          timeoutMs: config.replicaTimeoutMs,
          parallelWorkers,
          statementTimeoutMs: readStatementTimeoutMs,
          longestStatementMs: LONGEST_READ_STATEMENT_MS,
          log: infra.log,
        })
      : undefined;
  for (const [name, set] of replicas?.pools ?? []) metrics.watchPool(name, set.pool);
  if (replicas) watchReplicaLag(metrics.registry, () => replicas.status());
  // One read model for /api/v1, its vector tiles and /ogc (they share its answer cache and
  // remembered scopes): on the primary, or routed over the replicas.
  const countRead = (target: string) => metrics.readTarget.inc({ target });
  const reader = replicas ? routedReader(replicas, primaryReader, readerOn, countRead) : primaryReader;
  // The exports of /api/v1 read where its pages do. Each holds a snapshot open for as long as it
  // streams (postgres/read/export.ts): on the primary on a pool of their own, so that slow downloads
  // take no connection the pages need; on a replica on its read pool, at most EXPORT_SNAPSHOTS of its 8.
  // Its bound is per query: a holder idle in its transaction for as long as the export streams runs
  // no query, so no timer (idle_in_transaction_session_timeout is what ends a forgotten one).
  const snapshotPool = await createDatabasePool(databaseUrl, {
    statementTimeoutMs: readStatementTimeoutMs,
    maximumPoolSize: EXPORT_SNAPSHOTS,
    parallelWorkers,
    timeBounds: primaryBounds(readStatementTimeoutMs, databaseTimeoutMarginMs),
  });
  metrics.watchPool('export-snapshots', snapshotPool);
  const primaryExporter = postgresEventExporter(readPool, { snapshotPool });
  const exporter = replicas
    ? routedReader(replicas, primaryExporter, ({ pool }) => postgresEventExporter(pool), countRead)
    : primaryExporter;
  // Exports kept as files once per data version (adapters/files/export-file-store.ts), on this host's disk.
  const exportFiles = config.exportCache.maxBytes > 0 ? localExportFileStore(config.exportCache) : undefined;
  const exportJobs = exportFiles
    ? await backgroundExports(infra, readPool, reader, exporter, exportFiles)
    : undefined;
  return {
    replicas,
    /** The read model of /api/v1 (the feeds of saved views read through it too: composition/feeds.ts). */
    events: reader,
    /** The primary's read pool. */
    pool: readPool,
    /** With read replicas: the request's read context and the primary's position. */
    readYourWrites: replicas ? readYourWritesOn(replicas) : undefined,
    http: (): HttpFeature =>
      readHttp({
        readApi: {
          events: reader,
          // One event's provenance reads the primary: the page is rare and its rows are by key.
          provenance: postgresEventProvenance(readPool),
          // On the primary always: its visibility fence must never move back (changes.ts).
          changes: postgresChangeFeed(readPool),
          exporter,
          ...(exportFiles ? { exportFiles, exportEncoder: exportEncoders } : {}),
          maxArchiveTiles: config.exportArchiveMaxTiles,
          ...(exportJobs ? { exportJobs } : {}),
        },
        tiles: { tiles: reader },
        ogc: { events: reader, clock: infra.clock },
      }),
    async close() {
      await replicas?.close();
      await genericPlanPool.end();
      await snapshotPool.end();
      await readPool.end();
    },
  };
}

/**
 * Background exports (application/read/background-exports.ts): their jobs run in the API processes,
 * which hold the kept files' directory, through the same exportEvents as a download. The queue is
 * created here too: an API process works it even where no worker process runs.
 */
async function backgroundExports(
  infra: Pick<Infrastructure, 'config' | 'boss'>,
  pool: DatabasePool,
  reader: EventReader & TileReader,
  exporter: EventExporter,
  files: ExportFileStore,
): Promise<BackgroundExports> {
  const jobs = postgresExportJobStore(pool);
  for (const queue of VIEW_EXPORT_QUEUES) await infra.boss.createQueue(queue.name, queue.options);
  const deps = {
    exporter,
    files,
    encoder: exportEncoders,
    tiles: reader,
    maxArchiveTiles: infra.config.exportArchiveMaxTiles,
  };
  await startViewExportWorker(infra.boss, jobs, async (job, progress) => {
    const format = job.format as DownloadFormat;
    await exportEvents(deps, job.viewer, job.query, format, { whole: true, inJob: true, progress });
  });
  return {
    jobs,
    queue: pgBossExportJobQueue(infra.boss),
    syncMaxEvents: infra.config.exportSyncMaxEvents,
    count: (viewer, filter) => reader.countEvents(viewer, filter),
  };
}

function readYourWritesOn(replicas: ReplicaSet): ReadYourWrites {
  return {
    enter: (mustHave, next) => readContext.run({ mustHave }, next),
    primaryPosition: () => replicas.primaryPosition(),
  };
}

/** The change feed on a primary pool, for the subscriptions' worker (its fence, like the route's, on the primary). */
export function changeFeedOn(pool: DatabasePool): ChangeFeed {
  return postgresChangeFeed(pool);
}
