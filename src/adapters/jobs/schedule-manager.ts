import type { PgBoss } from 'pg-boss';
import { SCHEDULE_MANAGER_QUEUE } from './job-queue.ts';

// The spec's one schedule-manager-job: every minute, cluster-wide, it runs the periodic work of all
// features (scraper schedules, stuck scraper runs, scheduled imports). Features hand over tasks; this
// file owns the queue's worker and its cron so there is exactly one of each.

/** A piece of the every-minute pass; `run` resolves to whatever the task wants to report. */
export type ScheduleManagerTask = { name: string; run: () => Promise<unknown> };

type ScheduleManagerOptions = {
  onTaskError?: (task: string, error: unknown) => void;
};

/** Runs every task in order; each is isolated, so one failing does not keep the others from running this minute. */
export async function runScheduleManagerTasks(
  tasks: readonly ScheduleManagerTask[],
  options: ScheduleManagerOptions = {},
): Promise<void> {
  for (const task of tasks) {
    try {
      await task.run();
    } catch (error) {
      options.onTaskError?.(task.name, error);
    }
  }
}

export async function startScheduleManager(
  boss: PgBoss,
  tasks: readonly ScheduleManagerTask[],
  options: ScheduleManagerOptions = {},
): Promise<void> {
  await boss.work(SCHEDULE_MANAGER_QUEUE, { batchSize: 1 }, async () => {
    await runScheduleManagerTasks(tasks, options);
  });
  // pg-boss's cron queues one job per minute however many worker processes there are.
  await boss.schedule(SCHEDULE_MANAGER_QUEUE, '* * * * *', {}, { tz: 'UTC' });
}
