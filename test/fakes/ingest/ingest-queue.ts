import type { Clock } from '../../../src/ports/clock.ts';
import type { IngestQueue } from '../../../src/ports/ingest/ingest-queue.ts';

/** A queued run of the ingestion workflow: which job, and from when it may run. */
export type QueuedIngestRun = { jobId: number; startAfter: Date };

/**
 * The IngestQueue port in memory: every run asked for, in order, each waiting from now or from its
 * `startAfter`, as pgBossIngestQueue keeps them; both pass test/contracts/ingest/ingest-queue.ts.
 * `waiting()` is the test's view of the queue (the port itself only adds to it).
 */
export function memoryIngestQueue(clock: Clock = { now: () => new Date() }): IngestQueue & {
  waiting(): Promise<QueuedIngestRun[]>;
} {
  const runs: QueuedIngestRun[] = [];
  return {
    async enqueueIngestJob(jobId, options = {}) {
      runs.push({ jobId, startAfter: new Date((options.startAfter ?? clock.now()).getTime()) });
    },
    async waiting() {
      return runs.map((run) => ({ ...run, startAfter: new Date(run.startAfter.getTime()) }));
    },
  };
}
