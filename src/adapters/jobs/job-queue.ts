import { PgBoss } from 'pg-boss';
import { SCRAPER_QUEUES } from './scraper-jobs.ts';

// pg-boss keeps its own schema in the same database. This is the one place that creates its queues,
// so every process (api, worker, start) agrees on their options.

export type QueueRole = 'api' | 'worker' | 'migrate';

export type QueueDefinition = { name: string; options?: Parameters<PgBoss['createQueue']>[1] };

/** Queues grow with the features that own them; each entry names the job its worker handles. */
export const QUEUES: QueueDefinition[] = [...SCRAPER_QUEUES];

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
    migrate: true,
  });
  boss.on('error', onError);
  await boss.start();
  if (role !== 'api') {
    for (const queue of QUEUES) await boss.createQueue(queue.name, queue.options);
  }
  return boss;
}
