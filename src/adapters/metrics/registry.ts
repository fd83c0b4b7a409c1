import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { type DatabasePool, row, sql } from '../postgres/database.ts';
import { type Static, Type } from 'typebox';

// Prometheus metrics of one Chronomap process (docs/operations.md, "Metrics"), in prom-client's
// registry. Counters and histograms count what this process did (with several API processes the
// primary adds them up: cluster-metrics.ts); the queue and count-table gauges are read from the
// database when scraped, so every process reports the same whichever one is asked.

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
  /**
   * The pg-boss queues and the count tables' modes, read from `pool` when scraped (each read
   * bounded by DATABASE_READ_MS).
   */
  watchDatabase(pool: DatabasePool): void;
};

const QueueState = Type.Object({
  name: Type.String(),
  state: Type.String(),
  jobs: Type.Number(),
  oldest_seconds: Type.Union([Type.Number(), Type.Null()]),
});
type QueueState = Static<typeof QueueState>;

/** How long a scrape waits for the figures it reads from the database before it is served without them. */
const DATABASE_READ_MS = 1_500;

/** A read of the database for a scrape: its rows, or null when it failed or did not answer in time. */
async function boundedRead<T>(read: Promise<readonly T[]>): Promise<T[] | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), DATABASE_READ_MS);
  });
  try {
    return await Promise.race([read.then((rows) => [...rows]).catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every pg-boss queue (pgboss.queue) with its jobs in each waiting or running state, zeros included,
 * and the time the oldest due job of each state has waited (jobs whose start time, a retry's delay
 * or a scheduled start, is still ahead are counted but do not wait yet). Null when the database
 * failed or did not answer in time.
 */
async function readQueueState(pool: DatabasePool): Promise<QueueState[] | null> {
  const read = pool.any(sql.type(row(QueueState))`
    select q.name, s.state, coalesce(j.jobs, 0)::int as jobs, j.oldest_seconds
      from pgboss.queue q
     cross join unnest(array['created', 'retry', 'active']) as s (state)
      left join (
        select name, state::text as state, count(*)::int as jobs,
               extract(epoch from now() - min(start_after) filter (where start_after <= now()))::float8
                 as oldest_seconds
          from pgboss.job
         where state in ('created', 'retry', 'active')
         group by name, state) j on j.name = q.name and j.state = s.state
     order by q.name, s.state`);
  return boundedRead(read);
}

const CountTableMode = Type.Object({ count_table: Type.String(), mode: Type.String() });
type CountTableMode = Static<typeof CountTableMode>;

/** The modes a count table may be in (migration 0969): each gets a series, 1 for the current one. */
const COUNT_TABLE_MODES = ['kept', 'draining', 'off'] as const;

/**
 * prom-client's default metrics but three: nodejs_active_{handles,requests,resources}_total are
 * gauges with a counter's suffix (promtool rejects them), and their by-type gauges without the
 * suffix (`chronomap_nodejs_active_handles{type=…}`) say the same, summed with sum().
 */
const MISNAMED_DEFAULTS = ['handles', 'requests', 'resources'].map(
  (what) => `chronomap_nodejs_active_${what}_total`,
);

export function createMetrics(): ChronomapMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'chronomap_' });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  const pools = new Map<string, DatabasePool>();
  const caches: AnswerCacheUsage[] = [];
  let databasePool: DatabasePool | undefined;

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
    watchDatabase: (pool) => {
      databasePool = pool;
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
  // Counted since the cache started (the cache keeps the counts; they are read here, never set back).
  const cacheCounter = (name: string, help: string, pick: (u: ReturnType<AnswerCacheUsage>) => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(caches.reduce((sum, usage) => sum + pick(usage()), 0));
      },
    });
  cacheCounter(
    'chronomap_answer_cache_hits_total',
    '/events answers served from the answer cache',
    (u) => u.hits,
  );
  cacheCounter(
    'chronomap_answer_cache_misses_total',
    '/events answers read from the tables',
    (u) => u.misses,
  );
  new Gauge({
    name: 'chronomap_answer_cache_bytes',
    help: 'Bytes the answer cache holds',
    registers: [registry],
    collect() {
      this.set(caches.reduce((sum, usage) => sum + usage().bytes, 0));
    },
  });

  // Both queue gauges come from one read of pgboss per scrape, made when the first of them (the
  // jobs, registered first) is collected; the second waits for that same read. Every known queue has
  // a series for each state, 0 when nothing is there. A database that does not answer within
  // DATABASE_READ_MS leaves both without series for that scrape (unknown is not 0), and the rest of
  // the scrape is still served.
  let queueRead: Promise<QueueState[] | null> | undefined;
  const readQueues = () => (databasePool ? readQueueState(databasePool) : Promise.resolve(null));
  new Gauge({
    name: 'chronomap_queue_jobs',
    help: 'pg-boss jobs per queue and state (created, retry, active), 0 when there are none',
    labelNames: ['queue', 'state'],
    aggregator: 'max', // every process reads the same rows: one value, not one per process
    registers: [registry],
    async collect() {
      queueRead = readQueues();
      const rows = await queueRead;
      this.reset();
      for (const queue of rows ?? []) this.set({ queue: queue.name, state: queue.state }, queue.jobs);
    },
  });
  new Gauge({
    name: 'chronomap_queue_oldest_job_age_seconds',
    help: 'How long the oldest job due in each pg-boss queue (created or retry, start time reached) has waited; 0 when none waits',
    labelNames: ['queue'],
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const rows = await (queueRead ?? readQueues());
      this.reset();
      const oldest = new Map<string, number>();
      for (const queue of rows ?? [])
        if (queue.state !== 'active')
          oldest.set(queue.name, Math.max(oldest.get(queue.name) ?? 0, queue.oldest_seconds ?? 0));
      for (const [queue, seconds] of oldest) this.set({ queue }, seconds);
    },
  });
  // The count tables with a mode (docs/scaling.md, "Step 3" and "Step 1"): which one each is in,
  // as the schedule manager's switch left it. No series when the database did not answer.
  new Gauge({
    name: 'chronomap_count_table_mode',
    help: 'The mode of each count table that has one: 1 for its current mode (kept, draining, off), 0 for the others',
    labelNames: ['table', 'mode'],
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const rows = databasePool
        ? await boundedRead<CountTableMode>(
            databasePool.any(sql.type(row(CountTableMode))`
              select count_table, mode from count_table_modes order by count_table`),
          )
        : null;
      this.reset();
      for (const table of rows ?? [])
        for (const mode of COUNT_TABLE_MODES)
          this.set({ table: table.count_table, mode }, table.mode === mode ? 1 : 0);
    },
  });
  return metrics;
}
