import type { HttpFeature } from '../adapters/http/http-feature.ts';
import type { ScraperUseCases } from '../application/scrapers/scraper-triggers.ts';
import { scrapersHttp } from '../adapters/http/scrapers/scrapers-http.ts';
import { cronerSchedule } from '../adapters/jobs/croner-schedule.ts';
import { pgBossScraperJobs, startScraperWorkers } from '../adapters/jobs/scraper-jobs.ts';
import { meteredRunnerClient } from '../adapters/metrics/instrument.ts';
import { accountScraperRoutes } from '../adapters/pages/scrapers/scrapers-page.ts';
import { postgresActorDirectory } from '../adapters/postgres/accounts/actor-directory.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import { postgresScraperRepoStore } from '../adapters/postgres/scrapers/scraper-repo-store.ts';
import { postgresScraperRunStore } from '../adapters/postgres/scrapers/scraper-run-store.ts';
import { postgresScraperStore } from '../adapters/postgres/scrapers/scraper-store.ts';
import { httpRunnerClient } from '../adapters/runner/runner-client.ts';
import { gitManifestReader } from '../adapters/scrapers/git-manifest-reader.ts';
import { uuidRunIds } from '../adapters/scrapers/scraper-support.ts';
import { yamlManifestSource } from '../adapters/scrapers/yaml-manifest-source.ts';
import { webhookTokens } from '../adapters/security/webhook-tokens.ts';
import type { LoginDeps } from '../application/accounts/log-in.ts';
import { cleanUpStuckRuns } from '../application/scrapers/clean-up-stuck-runs.ts';
import { executeScraperRun } from '../application/scrapers/execute-scraper-run.ts';
import { requestRepoSync } from '../application/scrapers/request-repo-sync.ts';
import { scheduleDueScrapers } from '../application/scrapers/schedule-due-scrapers.ts';
import type { ScraperDeps } from '../application/scrapers/scraper-deps.ts';
import { syncScraperRepo } from '../application/scrapers/sync-scraper-repo.ts';
import { triggerScraperRun } from '../application/scrapers/trigger-scraper-run.ts';
import { triggerScraperWebhook } from '../application/scrapers/trigger-scraper-webhook.ts';
import type { Quotas } from '../ports/accounts/quotas.ts';
import type { CollectionRepository } from '../ports/collections/collection-repository.ts';
import type { IngestFileCreator } from '../ports/ingest/ingest-file-creator.ts';
import type { FeatureFlagCheck } from '../ports/site/feature-flag-store.ts';
import type { FeatureWorkers, Infrastructure } from './infrastructure.ts';

// The scraper subsystem: repos, scrapers and runs, the runner client and its workers. The flag is
// the admin's feature-flag check, the quotas are the one Quotas seam's, and a run's CSV goes to
// the ingestion pipeline (counted against the scraper owner's quotas, like an upload).

export function composeScrapers(
  infra: Pick<Infrastructure, 'config' | 'boss' | 'clock' | 'metrics'>,
  on: DatabasePool,
  needs: {
    repository: CollectionRepository;
    flags: FeatureFlagCheck;
    quotas: Quotas;
    /** The ingestion pipeline's hand-over (ingest.ts's scraperImport). */
    ingest: IngestFileCreator;
  },
) {
  const { config } = infra;
  const deps: ScraperDeps = {
    repos: postgresScraperRepoStore(on),
    scrapers: postgresScraperStore(on),
    runs: postgresScraperRunStore(on),
    runner:
      config.scraperRunnerUrl && config.scraperApiKey
        ? httpRunnerClient(config.scraperRunnerUrl, config.scraperApiKey)
        : null,
    jobs: pgBossScraperJobs(infra.boss),
    flags: needs.flags,
    quotas: needs.quotas,
    ingest: needs.ingest,
    actors: postgresActorDirectory(on),
    tokens: webhookTokens,
    manifests: yamlManifestSource(gitManifestReader({ allowLoopback: config.scraperAllowLoopbackGit })),
    cron: cronerSchedule,
    runIds: uuidRunIds(),
    clock: infra.clock,
  };
  const triggers: ScraperUseCases = {
    triggerRun: (actor, scraperId) => triggerScraperRun(deps, actor, scraperId),
    triggerWebhook: (token) => triggerScraperWebhook(deps, token),
    requestSync: (actor, repoId) => requestRepoSync(deps, actor, repoId),
  };
  const collections = { repository: needs.repository, scrapers: deps };
  return {
    deps,
    triggers,
    /** The collections and triggers, and the /account scraper pages (who is calling, CSRF). */
    http: ({ login, csrfSecret }: { login: LoginDeps; csrfSecret: string }): HttpFeature => ({
      ...scrapersHttp({ triggers, collections }),
      pages: async (app) => {
        await app.register(accountScraperRoutes, { ...collections, login, csrfSecret });
      },
    }),
    workers: (): FeatureWorkers => {
      const metered = { ...deps, runner: deps.runner && meteredRunnerClient(deps.runner, infra.metrics) };
      return {
        start: () =>
          startScraperWorkers(infra.boss, {
            executeRun: (runId) => executeScraperRun(metered, runId),
            syncRepo: (repoId) => syncScraperRepo(deps, repoId),
          }),
        periodicTasks: [
          { name: 'scraper schedules', run: () => scheduleDueScrapers(deps) },
          { name: 'stuck scraper runs', run: () => cleanUpStuckRuns(deps) },
        ],
      };
    },
  };
}
