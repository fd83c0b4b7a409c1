import type { PgBoss } from 'pg-boss';
import type { Config } from '../../src/adapters/config/environment.ts';
import type { AccountsDeps } from '../../src/adapters/http/accounts/account-hooks.ts';
import { siteHttp } from '../../src/adapters/http/site/site-http.ts';
import { createMetrics } from '../../src/adapters/metrics/registry.ts';
import { loadMigrations } from '../../src/adapters/postgres/migrator.ts';
import { postgresSavedViewStore } from '../../src/adapters/postgres/site/saved-view-store.ts';
import { postgresDatabaseStatus } from '../../src/adapters/postgres/site/database-status.ts';
import type { DatabasePool } from '../../src/adapters/postgres/database.ts';
import type { ScraperDeps } from '../../src/application/scrapers/scraper-deps.ts';
import { composeFeatures, processInfrastructure } from '../../src/compose.ts';

// Parts of the service composed exactly as composeServices composes them (src/compose.ts), for the
// tests that drive one feature without a whole service.

const features = (config: Config, pool: DatabasePool, boss: PgBoss) =>
  composeFeatures(processInfrastructure(config, boss, pool, createMetrics()), pool);

/** The scraper use cases' dependencies on `pool`, their jobs sent through `boss`. */
export function composeScraperDeps(config: Config, pool: DatabasePool, boss: PgBoss): ScraperDeps {
  return features(config, pool, boss).scrapers.deps;
}

/** The accounts HTTP area on `pool` (accountsHttp), which sends no jobs. */
export function composeAccounts(config: Config, pool: DatabasePool): AccountsDeps {
  const noJobs = new Proxy({} as PgBoss, {
    get: () => {
      throw new Error('the accounts HTTP area sends no jobs');
    },
  });
  return features(config, pool, noJobs).accounts.httpDeps();
}

/** The site HTTP area (health and service metadata) on `pool`, with no runner and no missing settings. */
export function siteHttpOn(pool: DatabasePool) {
  return siteHttp({
    version: 'test',
    views: { views: postgresSavedViewStore(pool) },
    health: {
      database: postgresDatabaseStatus(pool, loadMigrations()),
      environment: { missingVariables: () => [] },
      runner: undefined,
    },
  });
}
