import type { PgBoss } from 'pg-boss';
import { type IngestDeps, runIngestJob } from '../../application/ingest/run-ingest-job.ts';
import type { IngestQueue } from '../../ports/ingest-ports.ts';
import { INGEST_PROCESS_QUEUE } from './job-queue.ts';

type IngestJobData = { ingestJobId: number };

export function pgBossIngestQueue(boss: PgBoss): IngestQueue {
  return {
    async enqueueIngestJob(jobId, options = {}) {
      await boss.send(INGEST_PROCESS_QUEUE, { ingestJobId: jobId } satisfies IngestJobData, {
        singletonKey: `ingest-job-${jobId}`,
        ...(options.startAfter ? { startAfter: options.startAfter } : {}),
      });
    },
  };
}

/** Registers the ingest-process worker; returns its id for shutdown. */
export async function startIngestWorker(
  boss: PgBoss,
  deps: IngestDeps,
  options: { concurrency: number; log: (line: string) => void },
): Promise<string> {
  return boss.work<IngestJobData>(
    INGEST_PROCESS_QUEUE,
    { localConcurrency: options.concurrency, pollingIntervalSeconds: 1 },
    async ([job]) => {
      if (!job) return;
      const outcome = await runIngestJob(deps, job.data.ingestJobId);
      options.log(`ingest job ${job.data.ingestJobId}: ${outcome}`);
    },
  );
}
