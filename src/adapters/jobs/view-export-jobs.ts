import type { PgBoss } from 'pg-boss';
import { runExportJob } from '../../application/read/background-exports.ts';
import type { ExportJob, ExportJobQueue, ExportJobStore } from '../../ports/read/export-jobs.ts';

// The `view-export` queue: one pg-boss job per background export of a view (application/read/
// background-exports.ts). It runs in the API processes, which hold the export file store (a local
// directory) and the read model. pg-boss's own retry is for a job whose worker stopped before it
// ended (a restart: the job expires and another process takes it); a job's own failure is recorded
// on it and not retried. The lease in view_export_jobs finds a stopped worker within seconds.

const VIEW_EXPORT_QUEUE = 'view-export';

export const VIEW_EXPORT_QUEUES = [
  {
    name: VIEW_EXPORT_QUEUE,
    options: { retryLimit: 2, retryDelay: 1, heartbeatSeconds: 10, expireInSeconds: 3600 },
  },
];

export function pgBossExportJobQueue(boss: PgBoss): ExportJobQueue {
  return {
    async enqueue(id) {
      await boss.send(VIEW_EXPORT_QUEUE, { id });
    },
  };
}

export async function startViewExportWorker(
  boss: PgBoss,
  jobs: ExportJobStore,
  write: (job: ExportJob, progress: (written: number) => void) => Promise<void>,
): Promise<string> {
  return boss.work<{ id: string }>(
    VIEW_EXPORT_QUEUE,
    { localConcurrency: 1, pollingIntervalSeconds: 1 },
    async ([job]) => {
      if (job) await runExportJob(jobs, job.data.id, write);
    },
  );
}
