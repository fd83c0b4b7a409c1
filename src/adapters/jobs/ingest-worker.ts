import type { PgBoss } from 'pg-boss';
import {
  type DeferredCountsDeps,
  refreshDeferredCounts,
  sweepDeferredCounts,
} from '../../application/ingest/refresh-deferred-counts.ts';
import { type FineCellsSwitchDeps, switchFineCells } from '../../application/ingest/switch-fine-cells.ts';
import { type IngestDeps, runIngestJob } from '../../application/ingest/run-ingest-job.ts';
import type { ResumedImport } from '../../application/ingest/stages/stage-context.ts';
import type { CountsRefreshQueue } from '../../ports/ingest/counts-refresh-queue.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import { INGEST_PROCESS_QUEUE, INGEST_REFRESH_COUNTS_QUEUE } from './job-queue.ts';
import type { ScheduleManagerTask } from './schedule-manager.ts';

type IngestJobData = { ingestJobId: number };
type RefreshJobData = { datasetId: number };

export function pgBossIngestQueue(boss: PgBoss): IngestQueue & CountsRefreshQueue {
  return {
    async enqueueCountsRefresh(datasetId) {
      await boss.send(INGEST_REFRESH_COUNTS_QUEUE, { datasetId } satisfies RefreshJobData, {
        singletonKey: `dataset-${datasetId}`,
      });
    },
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
      const onResume = (resumed: ResumedImport) => options.log(resumeLine(resumed));
      // job.signal: pg-boss's (the claim is gone), and the process's shutdown (job-stops.ts).
      const outcome = await runIngestJob({ ...deps, onResume }, job.data.ingestJobId, job.signal);
      options.log(`ingest job ${job.data.ingestJobId}: ${outcome}`);
    },
  );
}

/** The log line of a job picked up partway: where, with how much done (issue 31 §6). */
function resumeLine(resumed: ResumedImport): string {
  const rows = resumed.rowsTotal > 0 ? ` of ${resumed.rowsTotal}` : '';
  return (
    `ingest job ${resumed.jobId}: resuming at ${resumed.stage} with ${resumed.rowsProcessed}${rows} rows done` +
    ` (stages done before: ${resumed.stagesDone.join(', ') || 'none'}; automatic retries so far: ${resumed.retryAttempts})`
  );
}

/**
 * Registers the worker that adds the deferred counts of a bulk import's dataset, and queues the
 * refresh of datasets left pending by imports that stopped (as the schedule manager does each minute).
 */
export async function startCountsRefreshWorker(
  boss: PgBoss,
  deps: DeferredCountsDeps,
  log: (line: string) => void,
): Promise<string> {
  const id = await boss.work<RefreshJobData>(
    INGEST_REFRESH_COUNTS_QUEUE,
    { localConcurrency: 1, pollingIntervalSeconds: 1 },
    async ([job]) => {
      if (!job) return;
      const started = performance.now();
      const refreshed = await refreshDeferredCounts(deps, job.data.datasetId);
      if (refreshed)
        log(
          `counts of dataset ${job.data.datasetId} refreshed in ${Math.round(performance.now() - started)} ms`,
        );
    },
  );
  await sweepDeferredCounts(deps);
  return id;
}

/** The schedule manager's share: datasets whose import stopped get their counts. */
export function deferredCountsTask(
  deps: DeferredCountsDeps,
  log: (line: string) => void,
): ScheduleManagerTask {
  return {
    name: 'deferred counts',
    async run() {
      const queued = await sweepDeferredCounts(deps);
      if (queued) log(`schedule manager: queued the counts refresh of ${queued} dataset(s)`);
    },
  };
}

/**
 * The schedule manager's share of the level-16 cells' mode (switch-fine-cells.ts): a move made, or
 * one left for later, is logged with the density it was decided on.
 */
export function fineCellsSwitchTask(
  deps: FineCellsSwitchDeps,
  log: (line: string) => void,
): ScheduleManagerTask {
  return {
    name: 'level-16 cells switch',
    async run() {
      const outcome = await switchFineCells(deps);
      if (outcome.result === 'stayed' || outcome.move === null) return outcome;
      const density = outcome.state?.density;
      const at = typeof density === 'number' ? ` at ${density.toFixed(2)} events per cell` : '';
      log(
        outcome.result === 'moved'
          ? `schedule manager: level-16 cells ${outcome.move} done (${outcome.state?.mode} before${at})`
          : `schedule manager: level-16 cells ${outcome.move} left to a later minute: a lock was busy`,
      );
      return outcome;
    },
  };
}
