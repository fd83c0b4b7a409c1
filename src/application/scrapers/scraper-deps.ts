import type { RunnerClient } from '../../ports/scrapers/runner-client.ts';
import type { ActorDirectory } from '../../ports/accounts/actor-directory.ts';
import type { FeatureFlagCheck } from '../../ports/site/feature-flag-store.ts';
import type { IngestFileCreator } from '../../ports/ingest/ingest-file-creator.ts';
import type { ManifestSource } from '../../ports/scrapers/manifest-source.ts';
import type { RunIds } from '../../ports/scrapers/run-ids.ts';
import type { ScraperJobQueue } from '../../ports/scrapers/scraper-job-queue.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import type { CronSchedule } from '../../ports/cron-schedule.ts';
import type { WebhookTokens } from '../../ports/webhook-tokens.ts';
import type { ScraperRepoStore } from '../../ports/scrapers/scraper-repo-store.ts';
import type { ScraperRunStore } from '../../ports/scrapers/scraper-run-store.ts';
import type { ScraperStore } from '../../ports/scrapers/scraper-store.ts';
import type { Clock } from '../../ports/clock.ts';

/** Everything the scraper use cases may need; each use case takes the part it uses. */
export type ScraperDeps = {
  repos: ScraperRepoStore;
  scrapers: ScraperStore;
  runs: ScraperRunStore;
  runner: RunnerClient | null;
  jobs: ScraperJobQueue;
  flags: FeatureFlagCheck;
  quotas: Quotas;
  ingest: IngestFileCreator;
  actors: ActorDirectory;
  tokens: WebhookTokens;
  manifests: ManifestSource;
  cron: Pick<CronSchedule, 'previous' | 'problem'>;
  runIds: RunIds;
  clock: Clock;
};
