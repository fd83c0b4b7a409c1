import { PgBoss } from 'pg-boss';
import { SCRAPER_QUEUES } from './scraper-jobs.ts';
import { DATA_EXPORT_QUEUES } from './data-export-jobs.ts';
import { SUBSCRIPTION_QUEUES } from './subscription-jobs.ts';
import { VIEW_EXPORT_QUEUES } from './view-export-jobs.ts';
import { EMAIL_QUEUES } from './email-jobs.ts';

// pg-boss keeps its own schema in the same database. This is the one place that creates its queues,
// so every process (api, worker, start) agrees on their options.

type QueueRole = 'api' | 'worker' | 'migrate';

type QueueDefinition = { name: string; options?: Parameters<PgBoss['createQueue']>[1] };

export const INGEST_PROCESS_QUEUE = 'ingest-process';
export const INGEST_REFRESH_COUNTS_QUEUE = 'ingest-refresh-counts';
export const SCHEDULE_MANAGER_QUEUE = 'schedule-manager-job';
export const SCHEDULED_FETCH_QUEUE = 'scheduled-ingest-fetch';
/** Automatic retries of a scheduled fetch that failed transiently: the spec's 3 attempts, 30 s doubling, capped at 300 s. */
export const SCHEDULED_FETCH_RETRIES = 3;

/** Queues grow with the features that own them; each entry names the job its worker handles. */
export const QUEUES: QueueDefinition[] = [
  {
    // One ingestion job's staged workflow (src/application/ingest/run-ingest-job.ts). The workflow
    // applies the spec's retry policy itself; pg-boss's own retries cover a worker that died
    // (its heartbeat stops and the job is handed to another worker). `singleton` with the ingest job
    // id as key: never two workers on the same ingest job.
    name: INGEST_PROCESS_QUEUE,
    options: {
      policy: 'singleton',
      retryLimit: 20,
      retryDelay: 1,
      heartbeatSeconds: 10,
      expireInSeconds: 6 * 3600,
    },
  },
  {
    // Adds the read-API counts a bulk import deferred (one dataset per job, one pass over its rows;
    // src/application/ingest/refresh-deferred-counts.ts). `stately` with the dataset as key: one
    // queued and one running refresh per dataset at most. A failed refresh (a deadlock with a writer)
    // is retried; the schedule manager's sweep queues it again anyway while the dataset is pending.
    name: INGEST_REFRESH_COUNTS_QUEUE,
    options: {
      policy: 'stately',
      retryLimit: 5,
      retryDelay: 5,
      heartbeatSeconds: 10,
      expireInSeconds: 3 * 3600,
    },
  },
  {
    // Every 60 s (pg-boss cron, once per minute across the cluster): the one schedule manager of
    // the spec, whose tasks queue due scraper runs, fail stuck scraper runs and queue due scheduled
    // imports (schedule-manager.ts). `stately`: one queued and one active pass at most, so a slow
    // pass is not piled upon. Heartbeats, as on every stately queue: a worker SIGKILLed during a pass
    // held the one active slot until expiry (300 s), so no schedule ran for five minutes (scale-out
    // test: 1 run in 216 s); now the pass fails within seconds and the next minute's runs.
    name: SCHEDULE_MANAGER_QUEUE,
    options: { policy: 'stately', retryLimit: 0, heartbeatSeconds: 10, expireInSeconds: 300 },
  },
  {
    // One scheduled import run: fetch the URL and hand the file to the ingestion pipeline.
    name: SCHEDULED_FETCH_QUEUE,
    options: {
      retryLimit: SCHEDULED_FETCH_RETRIES,
      retryDelay: 30,
      retryBackoff: true,
      retryDelayMax: 300,
      expireInSeconds: 3600,
    },
  },
  ...SCRAPER_QUEUES,
  ...DATA_EXPORT_QUEUES,
  ...SUBSCRIPTION_QUEUES,
  ...VIEW_EXPORT_QUEUES,
  ...EMAIL_QUEUES,
];

export async function startJobQueue(
  connectionString: string,
  role: QueueRole,
  onError: (error: Error) => void,
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString,
    schema: 'pgboss',
    application_name: `chronomap-${role}`,
    max: role === 'worker' ? 6 : 3,
    // Only workers run pg-boss's maintenance and cron; API processes just send jobs.
    supervise: role === 'worker',
    schedule: role === 'worker',
    // Finds jobs of workers that died (stopped heartbeats) within seconds rather than a minute. Both
    // intervals: a supervision pass fails dead jobs only when the queue's monitor interval has
    // passed too (pg-boss's default 60 s made a SIGKILLed worker's import wait ~50 s to resume:
    // docs/scaling.md, "Many processes behind a load balancer").
    superviseIntervalSeconds: 10,
    monitorIntervalSeconds: 10,
    // A worker skips the singleton keys its cached queue state says are active, and the cache was
    // refreshed every 60 s (pg-boss's default): an import handed back by a worker that stopped
    // (SIGTERM, job-stops.ts) or died waited up to a minute for the worker that polled beside it.
    queueCacheIntervalSeconds: 10,
    migrate: true,
  });
  boss.on('error', onError);
  await boss.start();
  if (role !== 'api') {
    for (const queue of QUEUES) {
      await boss.createQueue(queue.name, queue.options);
      // createQueue leaves an existing queue as it is: an upgraded deployment gets changed options
      // (a heartbeat added) this way. The policy and partitioning cannot change after creation.
      const { policy: _policy, partition: _partition, ...changeable } = queue.options ?? {};
      if (Object.keys(changeable).length > 0) await boss.updateQueue(queue.name, changeable);
    }
  }
  return boss;
}
