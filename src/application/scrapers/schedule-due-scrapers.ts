import { dueTime } from '../../domain/schedule-due.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/**
 * `schedule-manager-job`, every 60 s: a run for each scheduled scraper whose cron has a due time
 * not yet run. Several workers may do this at once: the run store keeps one run per (scraper,
 * due time), and only the worker whose insert won queues the execution job.
 */
export async function scheduleDueScrapers(
  deps: Pick<ScraperDeps, 'scrapers' | 'runs' | 'jobs' | 'flags' | 'cron' | 'runIds' | 'clock'>,
): Promise<{ queued: { scraperId: number; scheduledFor: string }[] }> {
  const queued: { scraperId: number; scheduledFor: string }[] = [];
  if (!(await deps.flags.isEnabled('enableScrapers'))) return { queued };
  const now = deps.clock.now();
  for (const scraper of await deps.scrapers.listSchedulable()) {
    if (!scraper.schedule) continue;
    const due = dueTime(
      {
        schedule: scraper.schedule,
        // Never a due time from before the current schedule took effect, nor one run already.
        after: [
          new Date(scraper.scheduleSince),
          scraper.lastScheduledFor ? new Date(scraper.lastScheduledFor) : null,
        ],
      },
      now,
      (expression, at) => deps.cron.previous(expression, at),
    );
    if (!due) continue;
    const run = await deps.runs.createQueued({
      scraperId: scraper.id,
      runId: deps.runIds.next(),
      triggeredBy: 'schedule',
      triggeredByUser: null,
      scheduledFor: due,
    });
    if (!run) continue;
    await deps.jobs.enqueueExecution(run.id);
    queued.push({ scraperId: scraper.id, scheduledFor: due.toISOString() });
  }
  return { queued };
}
