import type { PgBoss } from 'pg-boss';
import type { Config } from '../adapters/config/environment.ts';
import type { ScheduleManagerTask } from '../adapters/jobs/schedule-manager.ts';
import type { ChronomapMetrics } from '../adapters/metrics/registry.ts';
import type { AccessPolicy } from '../domain/accounts/quotas.ts';
import type { Clock } from '../ports/clock.ts';
import type { CountsRefreshQueue } from '../ports/ingest/counts-refresh-queue.ts';
import type { FileStore } from '../ports/ingest/file-store.ts';
import type { Geocoder } from '../ports/ingest/geocoder.ts';
import type { IngestQueue } from '../ports/ingest/ingest-queue.ts';
import type { SourceFiles } from '../ports/ingest/source-files.ts';

// What every feature's composition module is handed: the things a process builds once
// (src/compose.ts builds them) whichever pool a feature's adapters are built on.

export type Infrastructure = {
  config: Config;
  /** The package version, for the OpenAPI document, `/` and /api/health. */
  version: string;
  boss: PgBoss;
  clock: Clock;
  metrics: ChronomapMetrics;
  /** Background work's log lines (quiet with LOG_LEVEL=silent). */
  log: (line: string) => void;
  /** config/quotas.yaml, read once per process: every feature and every pool asks the same policy. */
  policy: AccessPolicy;
  /** The one place that names where ingest files live: FileStore writes them, SourceFiles reads them. */
  ingestFiles: { fileStore: FileStore; sourceFiles: SourceFiles };
  /** The ingest workflow's and the deferred counts' jobs (uploads, schedules and scrapers send them). */
  ingestQueue: IngestQueue & CountsRefreshQueue;
  /** The configured geocoder chain (null: geocoding is off), one per process so its rate limit is one. */
  geocoder: Geocoder | null;
};

/** What a feature runs in a worker process. */
export type FeatureWorkers = {
  /** Subscribes the feature's pg-boss workers. */
  start(): Promise<void>;
  /** Its share of the one schedule manager's every-minute pass, in the order they run. */
  periodicTasks: ScheduleManagerTask[];
};
