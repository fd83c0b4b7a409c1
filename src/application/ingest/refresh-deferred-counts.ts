import type { CountsRefreshQueue } from '../../ports/ingest/counts-refresh-queue.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';

// The read-API counts a bulk import deferred (docs/ingestion.md, "Deferred counts") are added by a
// job that create-events queues when it ends. A worker that died in the middle of create-events and
// whose job is not resumed queues nothing: this sweep, run every minute by the schedule manager and
// when a worker starts, queues the refresh of every pending dataset no import has written to for a
// while. The refresh is correct whenever it runs (writers and the refresh serialize on the dataset
// row); running it while an import still writes only costs that import its deferral.

/** How long an import's create-events may go without committing a batch before its counts are refreshed anyway. */
const IMPORT_IDLE_SECONDS = 120;

export type DeferredCountsDeps = {
  store: Pick<IngestStore, 'datasetsAwaitingCounts' | 'refreshDatasetCounts'>;
  countsRefresh: CountsRefreshQueue;
};

/** Queues a refresh for each pending dataset whose import is no longer running; how many. */
export async function sweepDeferredCounts(deps: DeferredCountsDeps): Promise<number> {
  const datasets = await deps.store.datasetsAwaitingCounts(IMPORT_IDLE_SECONDS);
  for (const datasetId of datasets) await deps.countsRefresh.enqueueCountsRefresh(datasetId);
  return datasets.length;
}

/** Adds a pending dataset's counts; false when it was not pending (already refreshed, or deleted). */
export function refreshDeferredCounts(deps: DeferredCountsDeps, datasetId: number): Promise<boolean> {
  return deps.store.refreshDatasetCounts(datasetId);
}
