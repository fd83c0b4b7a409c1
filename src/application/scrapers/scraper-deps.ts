import type { RunnerClient } from '../../ports/runner-client.ts';
import type {
  ActorDirectory,
  FeatureFlags,
  IngestFileCreator,
  ManifestSource,
  RunIds,
  ScraperJobQueue,
} from '../../ports/scraper-collaborators.ts';
import type { Quotas } from '../../ports/quotas.ts';
import type { CronSchedule } from '../../ports/cron-schedule.ts';
import type { WebhookTokens } from '../../ports/webhook-tokens.ts';
import type { ScraperRepoStore, ScraperRunStore, ScraperStore } from '../../ports/scraper-stores.ts';

/** Everything the scraper use cases may need; each use case takes the part it uses. */
export type ScraperDeps = {
  repos: ScraperRepoStore;
  scrapers: ScraperStore;
  runs: ScraperRunStore;
  runner: RunnerClient | null;
  jobs: ScraperJobQueue;
  flags: FeatureFlags;
  quotas: Quotas;
  ingest: IngestFileCreator;
  actors: ActorDirectory;
  tokens: WebhookTokens;
  manifests: ManifestSource;
  cron: Pick<CronSchedule, 'previous'>;
  runIds: RunIds;
  now: () => Date;
};
