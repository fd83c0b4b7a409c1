import {
  type DatabaseCheck,
  type EmailCheck,
  emailCheck,
  environmentCheck,
  type HealthReport,
  isHealthy,
  type MigrationsCheck,
  migrationsCheck,
  type PostgisCheck,
} from '../../domain/site/health.ts';
import type {
  DatabaseStatus,
  EmailOutboxStatus,
  EnvironmentStatus,
  ReplicaStatus,
  RunnerStatus,
} from '../../ports/site/system-status.ts';
import type { FeatureFlagCheck } from '../../ports/site/feature-flag-store.ts';

export type HealthDeps = {
  database: DatabaseStatus;
  environment: EnvironmentStatus;
  /** The admin's switches: scrapers switched on need a runner. */
  flags?: FeatureFlagCheck | undefined;
  runner?: RunnerStatus | undefined;
  replicas?: ReplicaStatus | undefined;
  /** The e-mail outbox, where e-mail is configured (absent from the report otherwise). */
  email?: EmailOutboxStatus | undefined;
  /**
   * How long the database's answers are waited for (default 2 s): past it the database is reported
   * as not answering (503), so a stalled primary is reported rather than hanging the check.
   */
  databaseDeadlineMs?: number;
};

type HealthResult = { healthy: boolean; report: HealthReport };

/** What the database said: the checks that ask it, and the admin's scraper switch read from it. */
type DatabaseFacts = {
  database: DatabaseCheck;
  postgis: PostgisCheck;
  migrations: MigrationsCheck;
  scrapersEnabled: boolean;
  email: EmailCheck | undefined;
};

const DEFAULT_DATABASE_DEADLINE_MS = 2_000;

/**
 * The database checks still running, per process's health deps: a check asked meanwhile waits for
 * them (within its own deadline) rather than sending more statements into a stalled database,
 * where each would hold a pooled connection until the database answers again.
 */
const inFlight = new WeakMap<HealthDeps, Promise<DatabaseFacts>>();

export async function checkHealth(deps: HealthDeps): Promise<HealthResult> {
  let asked = inFlight.get(deps);
  if (!asked) {
    asked = askDatabase(deps).finally(() => inFlight.delete(deps));
    inFlight.set(deps, asked);
  }
  const deadlineMs = deps.databaseDeadlineMs ?? DEFAULT_DATABASE_DEADLINE_MS;
  const [facts, runner] = await Promise.all([within(asked, deadlineMs), deps.runner?.check()]);
  const { database, migrations, postgis, scrapersEnabled, email } = facts ?? silent(deadlineMs, deps);
  const report: HealthReport = {
    database,
    migrations,
    postgis,
    environment: environmentCheck(deps.environment.missingVariables(), {
      scrapersEnabled,
      runnerConfigured: deps.runner !== undefined,
    }),
  };
  if (runner) report.runner = runner;
  if (deps.replicas) report.replicas = deps.replicas.status();
  if (email) report.email = email;
  return { healthy: isHealthy(report), report };
}

async function askDatabase(deps: HealthDeps): Promise<DatabaseFacts> {
  const [database, postgis, migrations, scrapersEnabled, email] = await Promise.all([
    deps.database.ping(),
    deps.database.postgis(),
    readMigrations(deps.database),
    // A database that cannot be read is reported as such above; the switch then counts as off.
    deps.flags?.isEnabled('enableScrapers').catch(() => false) ?? false,
    deps.email?.recentStatus().then(emailCheck, (error: unknown): EmailCheck => ({
      status: 'error',
      message: error instanceof Error ? error.message : String(error),
    })),
  ]);
  return { database, postgis, migrations, scrapersEnabled, email };
}

/** The database did not answer in time: every check that asks it says so. */
function silent(deadlineMs: number, deps: HealthDeps): DatabaseFacts {
  const message = `the database did not answer within ${deadlineMs} ms`;
  return {
    database: { status: 'error', message },
    postgis: { status: 'error', message },
    migrations: { status: 'error', message },
    scrapersEnabled: false,
    email: deps.email ? { status: 'error', message } : undefined,
  };
}

/** `work`'s result, or undefined when it takes longer than `ms` (the work itself goes on). */
async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function readMigrations(database: DatabaseStatus): Promise<MigrationsCheck> {
  try {
    return migrationsCheck(await database.pendingMigrations());
  } catch (error) {
    return { status: 'error', message: error instanceof Error ? error.message : String(error) };
  }
}
