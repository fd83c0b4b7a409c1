/** Queues the refresh of a dataset's deferred read-API counts (at most one queued per dataset). */
export interface CountsRefreshQueue {
  enqueueCountsRefresh(datasetId: number): Promise<void>;
}
