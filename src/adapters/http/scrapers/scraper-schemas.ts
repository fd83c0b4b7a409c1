import { Type } from 'typebox';
import type { ScraperRun } from '../../../domain/scrapers/scrapers.ts';

// The schemas of the scraper triggers (scraper-routes.ts): a run just queued, a sync just asked for.
export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

export const QueuedScraperRunDoc = Type.Object({
  id: Type.Integer(),
  runId: Type.String({ description: "The runner's run_id (UUID)" }),
  scraper: Type.Integer(),
  status: Type.Literal('queued'),
  triggeredBy: Type.Union([Type.Literal('manual'), Type.Literal('webhook'), Type.Literal('schedule')]),
  queuedAt: Type.String({ format: 'date-time' }),
});

export const QueuedRunBody = Type.Object({
  message: Type.String(),
  jobId: Type.Union([Type.String(), Type.Null()]),
  run: QueuedScraperRunDoc,
});

/** A run just queued, as the run and webhook endpoints answer it. */
export const queuedScraperRunDoc = (run: ScraperRun) => ({
  id: run.id,
  runId: run.runId,
  scraper: run.scraperId,
  status: 'queued' as const,
  triggeredBy: run.triggeredBy,
  queuedAt: run.queuedAt,
});

export const SyncQueuedBody = Type.Object({
  message: Type.String(),
  repo: Type.Integer(),
  jobId: Type.Union([Type.String(), Type.Null()], {
    description: 'null when a sync of this repo was already waiting: that one will read the latest code',
  }),
  syncStatus: Type.Literal('pending'),
});
