import {
  environmentCheck,
  type HealthReport,
  isHealthy,
  type MigrationsCheck,
  migrationsCheck,
} from '../../domain/site/health.ts';
import type {
  DatabaseStatus,
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
};

type HealthResult = { healthy: boolean; report: HealthReport };

export async function checkHealth(deps: HealthDeps): Promise<HealthResult> {
  const [database, postgis, migrations, runner, scrapersEnabled] = await Promise.all([
    deps.database.ping(),
    deps.database.postgis(),
    readMigrations(deps.database),
    deps.runner?.check(),
    // A database that cannot be read is reported as such above; the switch then counts as off.
    deps.flags?.isEnabled('enableScrapers').catch(() => false) ?? false,
  ]);
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
  return { healthy: isHealthy(report), report };
}

async function readMigrations(database: DatabaseStatus): Promise<MigrationsCheck> {
  try {
    return migrationsCheck(await database.pendingMigrations());
  } catch (error) {
    return { status: 'error', message: error instanceof Error ? error.message : String(error) };
  }
}
