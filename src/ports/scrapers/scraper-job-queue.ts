/** The scraper's background jobs (repo syncs, run executions) on the job queue. */
export interface ScraperJobQueue {
  /** Queues a sync; a sync already waiting for the repo absorbs this one. */
  enqueueSync(repoId: number): Promise<{ jobId: string | null }>;
  enqueueExecution(runId: number): Promise<{ jobId: string | null }>;
  /** Queues a sync to run after `seconds` (a running scraper waits to be deleted). */
  enqueueSyncLater(repoId: number, seconds: number): Promise<void>;
}
