import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type DatabasePool, row, sql } from '../postgres/database.ts';
import { Type } from 'typebox';

// Prometheus metrics of one Chronomap process (docs/operations.md, "Metrics"), in prom-client's
// registry. Counters and histograms count what this process did; the queue gauges are read from
// the database when scraped, so every process reports the same queue whichever one is asked.

type AnswerCacheUsage = () => { entries: number; bytes: number; hits: number; misses: number };

export type ChronomapMetrics = {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  ingestRows: Counter<'stage'>;
  ingestStageDuration: Histogram<'stage' | 'status'>;
  geocoderCalls: Counter<'provider' | 'outcome'>;
  runnerCalls: Counter<'outcome'>;
  runnerCallDuration: Histogram<'outcome'>;
  readTarget: Counter<'target'>;
  /** A pool whose use and waiting clients are reported under `pool`. */
  watchPool(name: string, pool: DatabasePool): void;
  /** The /events answer cache of this process. */
  watchAnswerCache(usage: AnswerCacheUsage): void;
  /** The pg-boss queues, read (with a short statement budget) from `pool` when scraped. */
  watchQueues(pool: DatabasePool): void;
};

const QueueRow = row(
  Type.Object({
    name: Type.String(),
    state: Type.String(),
    jobs: Type.Number(),
    oldest_seconds: Type.Union([Type.Number(), Type.Null()]),
  }),
);

export function createMetrics(): ChronomapMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'chronomap_' });
  const pools = new Map<string, DatabasePool>();
  const caches: AnswerCacheUsage[] = [];
  let queuePool: DatabasePool | undefined;

  const metrics: ChronomapMetrics = {
    registry,
    httpRequestDuration: new Histogram({
      name: 'chronomap_http_request_duration_seconds',
      help: 'HTTP requests by route pattern and status, with their duration',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    ingestRows: new Counter({
      name: 'chronomap_ingest_rows_total',
      help: 'Rows an ingestion stage finished (rate() gives rows/s)',
      labelNames: ['stage'],
      registers: [registry],
    }),
    ingestStageDuration: new Histogram({
      name: 'chronomap_ingest_stage_duration_seconds',
      help: 'Duration of ingestion stages run by this process',
      labelNames: ['stage', 'status'],
      buckets: [0.05, 0.25, 1, 5, 15, 60, 300, 1200, 3600],
      registers: [registry],
    }),
    geocoderCalls: new Counter({
      name: 'chronomap_geocoder_addresses_total',
      help: 'Distinct addresses asked of a geocoder, by provider and outcome (cached = answered by the cache)',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    }),
    runnerCalls: new Counter({
      name: 'chronomap_runner_calls_total',
      help: 'Scraper runs sent to the runner, by outcome',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    runnerCallDuration: new Histogram({
      name: 'chronomap_runner_call_duration_seconds',
      help: 'Duration of runner calls, by outcome',
      labelNames: ['outcome'],
      buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
      registers: [registry],
    }),
    readTarget: new Counter({
      name: 'chronomap_read_api_calls_total',
      help: 'Read-model calls of /api/v1 by the server that answered (primary or a replica), with DATABASE_READ_URLS',
      labelNames: ['target'],
      registers: [registry],
    }),
    watchPool: (name, pool) => void pools.set(name, pool),
    watchAnswerCache: (usage) => void caches.push(usage),
    watchQueues: (pool) => {
      queuePool = pool;
    },
  };

  new Gauge({
    name: 'chronomap_db_pool_connections',
    help: 'Database connections of each pool by state (acquired, idle, pending)',
    labelNames: ['pool', 'state'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, pool] of pools) {
        const state = pool.state();
        this.set({ pool: name, state: 'acquired' }, state.acquiredConnections);
        this.set({ pool: name, state: 'idle' }, state.idleConnections);
        this.set({ pool: name, state: 'pending' }, state.pendingConnections);
      }
    },
  });
  new Gauge({
    name: 'chronomap_db_pool_waiting_clients',
    help: 'Queries waiting for a free connection of each pool (pool saturation)',
    labelNames: ['pool'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, pool] of pools) this.set({ pool: name }, pool.state().waitingClients);
    },
  });
  const cacheGauge = (name: string, help: string, pick: (u: ReturnType<AnswerCacheUsage>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(caches.reduce((sum, usage) => sum + pick(usage()), 0));
      },
    });
  // Monotonic in fact (the cache counts since start); gauges because they are read, not incremented.
  cacheGauge('chronomap_answer_cache_hits', '/events answers served from the answer cache', (u) => u.hits);
  cacheGauge('chronomap_answer_cache_misses', '/events answers read from the tables', (u) => u.misses);
  cacheGauge('chronomap_answer_cache_bytes', 'Bytes the answer cache holds', (u) => u.bytes);

  const queueJobs = new Gauge({
    name: 'chronomap_queue_jobs',
    help: 'pg-boss jobs per queue and state (created, retry, active)',
    labelNames: ['queue', 'state'],
    aggregator: 'max', // every process reads the same rows: one value, not one per process
    registers: [registry],
  });
  new Gauge({
    name: 'chronomap_queue_oldest_job_age_seconds',
    help: 'Age of the oldest job waiting (created or retry) in each pg-boss queue',
    labelNames: ['queue'],
    aggregator: 'max',
    registers: [registry],
    async collect() {
      this.reset();
      queueJobs.reset();
      if (!queuePool) return;
      const rows = await queuePool.any(sql.type(QueueRow)`
        select name, state::text as state, count(*)::int as jobs,
               extract(epoch from now() - min(created_on))::float8 as oldest_seconds
          from pgboss.job
         where state in ('created', 'retry', 'active')
         group by name, state`);
      const oldest = new Map<string, number>();
      for (const queue of rows) {
        queueJobs.set({ queue: queue.name, state: queue.state }, queue.jobs);
        if (queue.state !== 'active' && queue.oldest_seconds !== null)
          oldest.set(queue.name, Math.max(oldest.get(queue.name) ?? 0, queue.oldest_seconds));
      }
      for (const [queue, seconds] of oldest) this.set({ queue }, seconds);
    },
  });
  return metrics;
}
