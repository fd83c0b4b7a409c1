import type { Geocoder } from '../../ports/ingest/geocoder.ts';
import type { IngestJobStore } from '../../ports/ingest/ingest-job-store.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import { type RunnerClient } from '../../ports/scrapers/runner-client.ts';
import { RunnerError } from '../../domain/scrapers/runner-failures.ts';
import type { ChronomapMetrics } from './registry.ts';

// Decorators the composition root puts around adapters, so that the use cases report nothing
// themselves: each counts at the port's edge what passed through it.

/** Counts the distinct addresses asked of a geocoder, by outcome (located, low confidence, not found). */
export function meteredGeocoder(geocoder: Geocoder, metrics: ChronomapMetrics): Geocoder {
  return {
    name: geocoder.name,
    explain: (address) => geocoder.explain(address),
    async geocode(addresses, options) {
      try {
        const answers = await geocoder.geocode(addresses, options);
        for (const outcome of answers.values())
          metrics.geocoderCalls.inc({
            provider: outcome.match?.provider ?? geocoder.name,
            outcome:
              'location' in outcome ? 'located' : outcome.lowConfidence ? 'low_confidence' : 'not_found',
          });
        return answers;
      } catch (error) {
        metrics.geocoderCalls.inc({ provider: geocoder.name, outcome: 'error' }, addresses.length);
        throw error;
      }
    },
  };
}

/** Counts runner calls by outcome (the run's status, or why the runner did not run it) and their duration. */
export function meteredRunnerClient(client: RunnerClient, metrics: ChronomapMetrics): RunnerClient {
  return {
    async run(request, signal) {
      const stop = metrics.runnerCallDuration.startTimer();
      let outcome = 'error';
      try {
        const result = await client.run(request, signal);
        outcome = result.status;
        return result;
      } catch (error) {
        if (error instanceof RunnerError) outcome = error.kind;
        throw error;
      } finally {
        stop({ outcome });
        metrics.runnerCalls.inc({ outcome });
      }
    },
    stop: (runId) => client.stop(runId),
    status: (runId) => client.status(runId),
  };
}

const JOB_ENDINGS = new Set(['markNeedsReview', 'markCompleted', 'markFailed', 'scheduleRetry']);

/**
 * Times each ingestion stage from start to completion and counts the rows it reports as processed
 * (the store is told the cumulative count, by reportProgress or with each committed event batch;
 * the counter gets the increments).
 */
export function meteredIngestStore<Store extends IngestStore>(
  store: Store,
  metrics: ChronomapMetrics,
): Store {
  const started = new Map<string, (labels?: { status: string }) => number>();
  const rowsSeen = new Map<string, number>();
  const key = (jobId: number, stage: string) => `${jobId}:${stage}`;
  const countRows = (jobId: number, stage: string, rowsProcessed: number) => {
    const before = rowsSeen.get(key(jobId, stage)) ?? 0;
    if (rowsProcessed > before) metrics.ingestRows.inc({ stage }, rowsProcessed - before);
    rowsSeen.set(key(jobId, stage), rowsProcessed);
  };
  // A stage that fails or is retried never completes: forget its timer with the job's outcome.
  const forgetJob = (jobId: number) => {
    for (const map of [started, rowsSeen])
      for (const entry of map.keys()) if (entry.startsWith(`${jobId}:`)) map.delete(entry);
  };
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'startStage')
        return (jobId: number, stage: Parameters<IngestJobStore['startStage']>[1]) => {
          started.set(key(jobId, stage), metrics.ingestStageDuration.startTimer({ stage }));
          rowsSeen.delete(key(jobId, stage));
          return target.startStage(jobId, stage);
        };
      if (property === 'reportProgress')
        return (...args: Parameters<IngestJobStore['reportProgress']>) => {
          countRows(args[0], args[1], args[2].rowsProcessed);
          return target.reportProgress(...args);
        };
      if (property === 'commitEventBatch')
        return async (...args: Parameters<IngestStore['commitEventBatch']>) => {
          const stored = await target.commitEventBatch(...args);
          countRows(args[0], 'create-events', args[4].rowsProcessed);
          return stored;
        };
      if (property === 'completeStage')
        return (...args: Parameters<IngestJobStore['completeStage']>) => {
          const [jobId, stage, status] = args;
          started.get(key(jobId, stage))?.({ status });
          started.delete(key(jobId, stage));
          rowsSeen.delete(key(jobId, stage));
          return target.completeStage(...args);
        };
      if (typeof property === 'string' && JOB_ENDINGS.has(property))
        return (jobId: number, ...rest: unknown[]) => {
          forgetJob(jobId);
          return (target[property as keyof Store] as (...args: unknown[]) => unknown)(jobId, ...rest);
        };
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
