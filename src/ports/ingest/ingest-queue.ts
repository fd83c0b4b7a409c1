/** Queues a job's run of the ingestion workflow (now, or after a retry's delay). */
export interface IngestQueue {
  enqueueIngestJob(jobId: number, options?: { startAfter?: Date }): Promise<void>;
}
