import type { PgBoss } from 'pg-boss';
import type { ScraperJobQueue } from '../../ports/scrapers/scraper-job-queue.ts';
import { STUCK_MARGIN_SECS } from '../../domain/scrapers/runs.ts';
import { currentRequestId, isSafeRequestId, withRequestId } from '../request-context.ts';

// The scraper subsystem's pg-boss queues and workers. Names are the spec's job names. The
// schedule-manager-job is shared with scheduled imports and lives in schedule-manager.ts.

const SCRAPER_EXECUTION_JOB = 'scraper-execution-job';
const SCRAPER_REPO_SYNC_JOB = 'scraper-repo-sync-job';

const MAX_TIMEOUT_SECS = 3600;

type ExecutionJobData = { runId: number; requestId?: string };

type ScraperQueue = { name: string; options?: Parameters<PgBoss['createQueue']>[1] };

export const SCRAPER_QUEUES: ScraperQueue[] = [
  {
    name: SCRAPER_EXECUTION_JOB,
    // Never retried by pg-boss: the run record says whether a run happened, and a run that lost its
    // worker is failed by the stuck-run cleanup rather than run twice.
    options: { retryLimit: 0, expireInSeconds: MAX_TIMEOUT_SECS + STUCK_MARGIN_SECS + 60 },
  },
  {
    name: SCRAPER_REPO_SYNC_JOB,
    // One queued and one active sync per repo (singletonKey): rapid edits collapse into one sync,
    // which reads the repo as it is when it starts.
    options: { policy: 'stately', retryLimit: 2, retryDelay: 10, heartbeatSeconds: 10, expireInSeconds: 300 },
  },
];

export function pgBossScraperJobs(boss: PgBoss): ScraperJobQueue {
  return {
    async enqueueSync(repoId) {
      const jobId = await boss.send(SCRAPER_REPO_SYNC_JOB, { repoId }, { singletonKey: `repo-${repoId}` });
      return { jobId };
    },
    async enqueueSyncLater(repoId, seconds) {
      await boss.send(
        SCRAPER_REPO_SYNC_JOB,
        { repoId },
        { singletonKey: `repo-${repoId}`, startAfter: seconds },
      );
    },
    async enqueueExecution(runId) {
      // A run queued by a request (a trigger, a webhook) carries its id to the runner call.
      const requestId = currentRequestId();
      const data: ExecutionJobData = { runId, ...(requestId ? { requestId } : {}) };
      const jobId = await boss.send(SCRAPER_EXECUTION_JOB, data);
      return { jobId };
    },
  };
}

type ScraperWorkerHandlers = {
  executeRun(runId: number): Promise<unknown>;
  syncRepo(repoId: number): Promise<unknown>;
  /** Runs at once per worker process (runner capacity is the real limit; it answers 429 beyond it). */
  executionConcurrency?: number;
};

export async function startScraperWorkers(boss: PgBoss, handlers: ScraperWorkerHandlers): Promise<void> {
  await boss.work<ExecutionJobData>(
    SCRAPER_EXECUTION_JOB,
    { batchSize: 1, localConcurrency: handlers.executionConcurrency ?? 3 },
    async ([job]) => {
      if (!job) return;
      const { runId, requestId } = job.data;
      await withRequestId(isSafeRequestId(requestId) ? requestId : undefined, () =>
        handlers.executeRun(runId),
      );
    },
  );
  await boss.work<{ repoId: number }>(SCRAPER_REPO_SYNC_JOB, { batchSize: 1 }, async ([job]) => {
    if (job) await handlers.syncRepo(job.data.repoId);
  });
}
