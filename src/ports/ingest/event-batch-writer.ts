import type { NewEvent } from '../../domain/read/events.ts';
import type { DuplicateHandling } from '../../domain/ingest/rows.ts';
import type { QuotaLimit } from '../../domain/accounts/quotas.ts';
import type { Progress } from './ingest-job-store.ts';

/** The event limits of an import's user, resolved when its create-events stage starts (null: unlimited). */
export type EventQuota = { userId: number; totalEvents: QuotaLimit; eventsPerImport: QuotaLimit };

/** create-events' writer: a batch of events and the stage's progress, stored together. */
export interface EventBatchWriter {
  /**
   * Stores a batch of events and the stage's progress and counters in one transaction. The batch
   * continues the stage from `progress.rowsBefore`: it moves the stage's `rows_processed` from there
   * to `rowsProcessed` and adds `delta(stored)` to its counters, in SQL, only if `rows_processed` is
   * still `rowsBefore` (a compare-and-set); when it is not (the batch before did not commit, or
   * another worker moved the stage) nothing is stored and a recoverable failure is thrown, so the
   * stage resumes from its high-water mark. With `order`, the batch is stored at the same time as
   * the one before it, on another connection: once its events are stored it awaits `order.ready`
   * (that batch's commit) before it touches anything the two would both write. Answers what the
   * batch stored and the stage's counters after it. With `quota`, the events the batch created
   * count against the importer's totalEvents and the job's eventsPerImport in the same transaction:
   * a batch that would pass either limit stores nothing and throws the QuotaExceededError of the
   * tighter one (its `limit - used` is how many more events fit).
   */
  commitEventBatch(
    jobId: number,
    datasetId: number,
    events: NewEvent[],
    handling: DuplicateHandling,
    progress: Progress & { rowsBefore: number },
    delta: (stored: { inserted: number; updated: number }) => Record<string, number>,
    order?: { ready: () => Promise<unknown> },
    quota?: EventQuota,
  ): Promise<{ inserted: number; updated: number; counters: Record<string, number> }>;
}
