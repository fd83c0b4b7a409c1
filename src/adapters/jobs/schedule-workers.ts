import type { PgBoss } from 'pg-boss';
import { fetchScheduledIngest } from '../../application/ingest/fetch-scheduled-ingest.ts';
import { runScheduleManager, type ScheduleDeps } from '../../application/ingest/scheduled-ingests.ts';
import type { FileStore } from '../../ports/ingest/file-store.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { ScheduleQueue } from '../../ports/ingest/schedule-queue.ts';
import type { UrlFetcher } from '../../ports/url-fetcher.ts';
import { SCHEDULED_FETCH_QUEUE, SCHEDULED_FETCH_RETRIES } from './job-queue.ts';
import type { ScheduleManagerTask } from './schedule-manager.ts';

type FetchJobData = { runId: number };

export function pgBossScheduleQueue(boss: PgBoss): ScheduleQueue {
  return {
    async enqueueScheduledFetch(runId) {
      await boss.send(SCHEDULED_FETCH_QUEUE, { runId } satisfies FetchJobData);
    },
  };
}

/** Scheduled imports' share of the shared every-minute schedule manager (schedule-manager.ts). */
export function scheduledIngestsTask(deps: ScheduleDeps, log: (line: string) => void): ScheduleManagerTask {
  return {
    name: 'scheduled ingests',
    async run() {
      const { queued } = await runScheduleManager(deps);
      if (queued) log(`schedule manager: queued ${queued} scheduled import(s)`);
    },
  };
}

/** The worker that fetches one due scheduled import (queued by the schedule manager's task). */
export async function startScheduleWorkers(
  boss: PgBoss,
  deps: ScheduleDeps & { fetcher: UrlFetcher; files: FileStore; ingestQueue: IngestQueue },
  log: (line: string) => void,
): Promise<void> {
  await boss.work<FetchJobData>(
    SCHEDULED_FETCH_QUEUE,
    { localConcurrency: 2, pollingIntervalSeconds: 1 },
    async ([job]) => {
      if (!job) return;
      const outcome = await fetchScheduledIngest(deps, job.data.runId, {
        final: job.retryCount >= SCHEDULED_FETCH_RETRIES,
      });
      log(`scheduled run ${job.data.runId}: ${outcome.status}`);
      // A transient failure goes back to pg-boss, which retries with the spec's backoff.
      if (outcome.status === 'retry') throw new Error(outcome.error);
    },
  );
}
