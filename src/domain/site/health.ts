import type { ReplicaCheck } from '../read/replica-choice.ts';

// The health report's shape is the spec's; which results are critical is decided here so that every
// adapter (HTTP, CLI) answers the same way.

export type DatabaseCheck = { status: 'ok' | 'error'; message?: string };
export type MigrationsCheck = { status: 'ok' | 'pending' | 'error'; pending?: string[]; message?: string };
export type PostgisCheck = { status: 'ok' | 'not found' | 'error'; version?: string; message?: string };
type EnvironmentCheck = { status: 'ok' | 'error'; missing?: string[]; conflicts?: string[] };
export type RunnerCheck = {
  status: 'ok' | 'degraded';
  url: string;
  message?: string;
  activeRuns?: number;
};

export type HealthReport = {
  database: DatabaseCheck;
  migrations: MigrationsCheck;
  postgis: PostgisCheck;
  environment: EnvironmentCheck;
  runner?: RunnerCheck;
  /** Each read replica (a lagging or down one is a warning: its reads go to the primary). */
  replicas?: ReplicaCheck[];
};

/** Critical failures make the service unusable (503); pending migrations and a degraded runner are warnings. */
export function isHealthy(report: HealthReport): boolean {
  return (
    report.database.status === 'ok' &&
    report.migrations.status !== 'error' &&
    report.postgis.status === 'ok' &&
    report.environment.status === 'ok'
  );
}

export function migrationsCheck(pending: readonly string[]): MigrationsCheck {
  return pending.length === 0 ? { status: 'ok' } : { status: 'pending', pending: [...pending] };
}

/** Scrapers switched on by the admin while this process has no runner to run them. */
export const SCRAPERS_WITHOUT_RUNNER =
  'enableScrapers is on but SCRAPER_RUNNER_URL is not set: every scraper run fails until a runner is configured';

/**
 * The environment: required variables that are missing, and settings that contradict each other
 * (the admin's switches against the process's variables). Either is an error: the service
 * promises something it cannot do.
 */
export function environmentCheck(
  missing: readonly string[],
  facts: { scrapersEnabled: boolean; runnerConfigured: boolean } = {
    scrapersEnabled: false,
    runnerConfigured: false,
  },
): EnvironmentCheck {
  const conflicts = facts.scrapersEnabled && !facts.runnerConfigured ? [SCRAPERS_WITHOUT_RUNNER] : [];
  if (missing.length === 0 && conflicts.length === 0) return { status: 'ok' };
  return {
    status: 'error',
    ...(missing.length ? { missing: [...missing] } : {}),
    ...(conflicts.length ? { conflicts } : {}),
  };
}
