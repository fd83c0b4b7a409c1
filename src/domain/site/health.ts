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

/** The e-mail outbox as the health report shows it (present only where SMTP_URL is set). */
export type EmailCheck = {
  status: 'ok' | 'degraded' | 'error';
  message?: string;
  queued?: number;
  /** Seconds since the oldest mail still waiting to be sent was queued (null: none waits). */
  oldestQueuedSeconds?: number | null;
  /** Mails of the last hour sent, and failed (given up, or waiting for a retry after a failure). */
  recentSent?: number;
  recentFailures?: number;
};

/** What the outbox holds now: the port's answer (EmailStore.recentStatus). */
export type OutboxFacts = {
  sent: number;
  failed: number;
  retrying: number;
  queued: number;
  oldestQueuedSeconds: number | null;
  /** Seconds the longest-due mail has been due without being sent (null: none is due). */
  oldestDueSeconds: number | null;
};

/** A mail due this long and not sent means no worker sends the outbox (its lease is 5 minutes). */
const EMAIL_STUCK_AFTER_SECONDS = 15 * 60;

/**
 * The outbox's check: degraded when a due mail has waited past EMAIL_STUCK_AFTER_SECONDS (no
 * worker sends, or every send hangs), or when every send of the last hour failed. A warning, not
 * critical: the service works without its mails.
 */
export function emailCheck(facts: OutboxFacts): EmailCheck {
  const recentFailures = facts.failed + facts.retrying;
  const figures = {
    queued: facts.queued,
    oldestQueuedSeconds: facts.oldestQueuedSeconds,
    recentSent: facts.sent,
    recentFailures,
  };
  if (facts.oldestDueSeconds !== null && facts.oldestDueSeconds > EMAIL_STUCK_AFTER_SECONDS)
    return {
      status: 'degraded',
      message: `a mail has been due for ${Math.round(facts.oldestDueSeconds / 60)} minutes without being sent: is an e-mail worker running?`,
      ...figures,
    };
  if (facts.sent === 0 && recentFailures > 0)
    return {
      status: 'degraded',
      message: `every send of the last hour failed (${recentFailures}): see last_error in email_outbox`,
      ...figures,
    };
  return { status: 'ok', ...figures };
}

export type HealthReport = {
  database: DatabaseCheck;
  migrations: MigrationsCheck;
  postgis: PostgisCheck;
  environment: EnvironmentCheck;
  runner?: RunnerCheck;
  /** Each read replica (a lagging or down one is a warning: its reads go to the primary). */
  replicas?: ReplicaCheck[];
  /** The e-mail outbox, where SMTP_URL is set (a degraded one is a warning). */
  email?: EmailCheck;
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
