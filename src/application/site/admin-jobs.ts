import { requireAdmin, type Viewer } from '../../domain/access.ts';
import { DomainError } from '../../domain/errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type { CronSchedule } from '../../ports/cron-schedule.ts';
import type {
  JobQueueStatus,
  QueueSummary,
  ScheduleManagerFacts,
} from '../../ports/site/job-queue-status.ts';

// The admin views of background work (GET|POST /api/admin/schedule-service, GET /api/admin/jobs,
// POST /api/admin/jobs/run): admins only (401 anonymous, 403 others). Running due jobs now skips
// the waits of retries and deferred jobs, which is for development and tests, never production.

export type AdminJobsDeps = { jobs: JobQueueStatus; cron: CronSchedule; clock: Clock; production: boolean };

type ScheduleServiceStatus = ScheduleManagerFacts & {
  /** A worker process has registered its every-minute cron: the manager runs by itself. */
  enabled: boolean;
  nextRunAt: string | null;
};

export async function scheduleServiceStatus(
  deps: AdminJobsDeps,
  viewer: Viewer,
): Promise<ScheduleServiceStatus> {
  requireAdmin(viewer);
  const facts = await deps.jobs.scheduleManager();
  const next = facts.cron ? deps.cron.nextAfter(facts.cron, deps.clock.now()) : null;
  return { ...facts, enabled: facts.cron !== null, nextRunAt: next?.toISOString() ?? null };
}

export async function queueScheduleService(
  deps: AdminJobsDeps,
  viewer: Viewer,
): Promise<{ queued: boolean; status: ScheduleServiceStatus }> {
  requireAdmin(viewer);
  const queued = await deps.jobs.queueScheduleManager();
  return { queued, status: await scheduleServiceStatus(deps, viewer) };
}

export async function jobQueueSummary(
  deps: AdminJobsDeps,
  viewer: Viewer,
): Promise<(QueueSummary & { oldestAgeSeconds: number | null })[]> {
  requireAdmin(viewer);
  const now = deps.clock.now().getTime();
  return (await deps.jobs.queues()).map((queue) => ({
    ...queue,
    oldestAgeSeconds:
      queue.oldestQueuedAt === null
        ? null
        : Math.max(0, Math.round((now - Date.parse(queue.oldestQueuedAt)) / 1000)),
  }));
}

export async function runDueJobsNow(deps: AdminJobsDeps, viewer: Viewer): Promise<{ started: number }> {
  requireAdmin(viewer);
  if (deps.production) {
    throw new DomainError('forbidden', 'running jobs ahead of their time is for development and tests only', {
      code: 'NOT_IN_PRODUCTION',
    });
  }
  return { started: await deps.jobs.runDueJobs() };
}
