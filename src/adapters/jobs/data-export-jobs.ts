import type { PgBoss } from 'pg-boss';
import { buildDataExport, type DataExportDeps } from '../../application/accounts/export-own-data.ts';
import type { DataExportQueue } from '../../ports/accounts/data-export-store.ts';

// The `data-export` queue: one job per requested export (application/accounts/export-own-data.ts). A failed
// build is recorded on the export (the user may request another) and not retried; the one retry is for
// a build stopped by its worker's shutdown (job-stops.ts), which another worker starts again.

const DATA_EXPORT_QUEUE = 'data-export';

export const DATA_EXPORT_QUEUES = [
  { name: DATA_EXPORT_QUEUE, options: { retryLimit: 1, expireInSeconds: 3600 } },
];

export function pgBossDataExportQueue(boss: PgBoss): DataExportQueue {
  return {
    async enqueueDataExport(exportId) {
      await boss.send(DATA_EXPORT_QUEUE, { exportId });
    },
  };
}

export async function startDataExportWorker(boss: PgBoss, deps: DataExportDeps): Promise<string> {
  return boss.work<{ exportId: number }>(
    DATA_EXPORT_QUEUE,
    { localConcurrency: 1, pollingIntervalSeconds: 1 },
    async ([job]) => {
      if (job) await buildDataExport(deps, job.data.exportId, job.signal);
    },
  );
}
