/** Hands a claimed scheduled-import run to the worker that fetches its URL. */
export interface ScheduleQueue {
  enqueueScheduledFetch(runId: number): Promise<void>;
}
