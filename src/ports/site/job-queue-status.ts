// What an admin sees of the background work: every job queue's counts, the schedule manager's runs,
// and the two actions that start work now (queue the schedule manager, run due jobs).

export type QueueSummary = {
  name: string;
  /** Waiting (deferred included). */
  queued: number;
  /** Waiting and runnable now. */
  ready: number;
  /** Waiting for a later start (retry backoff, start-after). */
  deferred: number;
  active: number;
  failed: number;
  total: number;
  /** When the oldest waiting job was created, or null when none waits. */
  oldestQueuedAt: string | null;
};

type JobRunRecord = {
  state: string;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
};

export type ScheduleManagerFacts = {
  queue: string;
  /** The cron it is registered with (null: no worker process has started it). */
  cron: string | null;
  lastRun: JobRunRecord | null;
  queued: number;
  active: number;
};

export interface JobQueueStatus {
  queues(): Promise<QueueSummary[]>;
  scheduleManager(): Promise<ScheduleManagerFacts>;
  /** Queues a schedule-manager pass now; false when one is queued already (one at a time). */
  queueScheduleManager(): Promise<boolean>;
  /** Moves every waiting job whose start lies in the future to now; answers how many. */
  runDueJobs(): Promise<number>;
}
