import { PgBoss } from 'pg-boss';

// pg-boss keeps its own schema in the same database. This is the one place that creates its queues,
// so every process (api, worker, start) agrees on their options.

export type QueueRole = 'api' | 'worker' | 'migrate';

export type QueueDefinition = { name: string; options?: Parameters<PgBoss['createQueue']>[1] };

/** Queues grow with the features that own them; each entry names the job its worker handles. */
export const INGEST_PROCESS_QUEUE = 'ingest-process';

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
    // Finds jobs of workers that died (stopped heartbeats) within seconds rather than a minute.
    superviseIntervalSeconds: 10,
    migrate: true,
  });
  boss.on('error', onError);
  await boss.start();
  if (role !== 'api') {
    for (const queue of QUEUES) await boss.createQueue(queue.name, queue.options);
  }
  return boss;
}
