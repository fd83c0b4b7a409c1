import type { Test } from 'tap';
import type { IngestQueue } from '../../../src/ports/ingest/ingest-queue.ts';
import type { QueuedIngestRun } from '../../fakes/ingest/ingest-queue.ts';

// What every implementation of the IngestQueue port does, as one suite: run against the in-memory
// fake (test/unit/fakes/ingest/ingest-queue.test.ts) and against pgBossIngestQueue
// (test/integration/ingest/ingest-queue-contract.test.ts). A use case relies on these: a run asked
// for now may start at once, a retry's run not before its backoff, and each job's runs are its own.

/** A fresh, empty queue and a look at the runs waiting in it (by job id, then start). */
export type MakeIngestQueue = () => Promise<{
  queue: IngestQueue;
  waiting(): Promise<QueuedIngestRun[]>;
}>;

const byJobThenStart = (runs: QueuedIngestRun[]) =>
  [...runs].sort((a, b) => a.jobId - b.jobId || a.startAfter.getTime() - b.startAfter.getTime());

export function ingestQueueContract(t: Test, make: MakeIngestQueue): void {
  t.test('a run asked for without a delay may start at once', async (t) => {
    const { queue, waiting } = await make();
    await queue.enqueueIngestJob(7);
    const asked = new Date();
    const runs = await waiting();
    t.same(
      runs.map((run) => run.jobId),
      [7],
    );
    t.ok(runs[0] && runs[0].startAfter.getTime() <= asked.getTime(), 'it does not wait for a later time');
  });

  t.test("a retry's run waits until the time it was given", async (t) => {
    const { queue, waiting } = await make();
    const later = new Date('2099-01-01T00:00:30.000Z');
    await queue.enqueueIngestJob(8, { startAfter: later });
    t.same(await waiting(), [{ jobId: 8, startAfter: later }]);
  });

  t.test("each job's runs are its own", async (t) => {
    const { queue, waiting } = await make();
    const first = new Date('2099-01-01T00:01:00.000Z');
    const second = new Date('2099-01-01T00:02:00.000Z');
    await queue.enqueueIngestJob(21, { startAfter: second });
    await queue.enqueueIngestJob(20, { startAfter: first });
    t.same(byJobThenStart(await waiting()), [
      { jobId: 20, startAfter: first },
      { jobId: 21, startAfter: second },
    ]);
  });
}
