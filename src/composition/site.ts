import { missingVariables, projectRoot } from '../adapters/config/environment.ts';
import { guardedNewsletterPoster } from '../adapters/fetch/newsletter-poster.ts';
import { featureFlagsHttp, siteAdminHttp, siteHttp } from '../adapters/http/site/site-http.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import { cronerSchedule } from '../adapters/jobs/croner-schedule.ts';
import { pgBossJobQueueStatus } from '../adapters/jobs/job-queue-status.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import { loadMigrations } from '../adapters/postgres/migrator.ts';
import type { ReplicaSet } from '../adapters/postgres/read-replicas.ts';
import { postgresDatabaseStatus } from '../adapters/postgres/site/database-status.ts';
import { postgresFeatureFlagStore } from '../adapters/postgres/site/feature-flag-store.ts';
import { postgresSiteSettings } from '../adapters/postgres/site/site-settings.ts';
import { postgresSavedViewStore } from '../adapters/postgres/site/saved-view-store.ts';
import { savedViewsPage } from '../adapters/pages/site/saved-views-page.ts';
import type { SavedViewDeps } from '../application/site/saved-views.ts';
import { httpRunnerStatus } from '../adapters/runner/runner-health.ts';
import type { AdminJobsDeps } from '../application/site/admin-jobs.ts';
import { isFeatureEnabled } from '../application/site/feature-flags.ts';
import type { SiteNoticeDeps } from '../application/site/site-notices.ts';
import type { FeatureFlagCheck } from '../ports/site/feature-flag-store.ts';
import type { EmailOutboxStatus } from '../ports/site/system-status.ts';
import type { CollectionsFeature } from './collections.ts';
import type { Infrastructure } from './infrastructure.ts';

// The site: the admin's feature flags, legal notices and newsletter, the admin views of the job
// queues, `/` (the Explore page) and /api/health. Its notice and job routes are registered with the
// imports API (ingest.ts), where the OpenAPI document lists them.

export function composeSite(
  infra: Pick<Infrastructure, 'config' | 'version' | 'boss' | 'clock'>,
  on: DatabasePool,
  { collections }: { collections: CollectionsFeature },
) {
  const { config } = infra;
  const flags = postgresFeatureFlagStore(on);
  const settings = postgresSiteSettings(on);
  const notices: SiteNoticeDeps = {
    settings,
    newsletter: guardedNewsletterPoster({
      timeoutMs: 5_000,
      allowPrivateAddresses: config.ingest.fetch.allowPrivateAddresses,
    }),
    repository: collections.repository,
  };
  const adminJobs: AdminJobsDeps = {
    jobs: pgBossJobQueueStatus(infra.boss, on),
    cron: cronerSchedule,
    clock: infra.clock,
    production: config.nodeEnv === 'production',
  };
  // The admin's switch (PATCH /api/feature-flags), read on every check so it takes effect at once.
  const views: SavedViewDeps = { views: postgresSavedViewStore(on) };
  const flagCheck: FeatureFlagCheck = { isEnabled: (flag) => isFeatureEnabled(flags, flag) };
  return {
    flags,
    flagCheck,
    notices,
    adminJobs,
    /** Saved views (their feeds are composed in composition/feeds.ts). */
    views,
    /** The admin views of the jobs, legal notices and newsletter (placed by src/compose.ts). */
    adminHttp: (): HttpFeature => siteAdminHttp({ adminJobs, notices }),
    /** GET/PATCH /api/feature-flags (placed by src/compose.ts). */
    flagsHttp: (): HttpFeature => featureFlagsHttp({ flags }),
    /** `/`, saved views and their embeds, the scraper helper package and /api/health (with the replicas). */
    http: ({
      replicas,
      csrfSecret,
      email,
    }: {
      replicas: ReplicaSet | undefined;
      csrfSecret: string;
      /** The e-mail outbox for the health report, where e-mail is configured. */
      email?: EmailOutboxStatus | undefined;
    }): HttpFeature =>
      siteHttp({
        version: infra.version,
        views,
        pages: async (app) => {
          await app.register(savedViewsPage, { views, csrfSecret });
        },
        health: {
          database: postgresDatabaseStatus(on, loadMigrations()),
          environment: { missingVariables: () => missingVariables(config) },
          flags: flagCheck,
          runner: config.scraperRunnerUrl ? httpRunnerStatus(config.scraperRunnerUrl) : undefined,
          replicas,
          email,
        },
        explore: {
          root: projectRoot,
          tileUrl: config.mapTileUrl,
          tileAttribution: config.mapTileAttribution,
          basemapArchive: config.mapBasemapPmtiles,
        },
      }),
  };
}
