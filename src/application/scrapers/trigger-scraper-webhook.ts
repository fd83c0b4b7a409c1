import { isWebhookTokenFormat } from '../../domain/ingest/webhook-tokens.ts';
import { type QueuedRun, queueRun } from './trigger-scraper-run.ts';
import type { ScraperDeps } from './scraper-deps.ts';

type Deps = Pick<
  ScraperDeps,
  'scrapers' | 'repos' | 'runs' | 'jobs' | 'flags' | 'quotas' | 'actors' | 'runIds' | 'tokens' | 'clock'
>;

/**
 * The scraper half of `POST /api/webhooks/trigger/{token}` (the endpoint is shared with scheduled
 * ingests): null when the token belongs to no scraper, so the endpoint can try the next resource
 * type and answer 404 when none claims it. A disabled webhook has no stored hash, so its old token
 * is simply unknown.
 */
export async function triggerScraperWebhook(deps: Deps, token: string): Promise<QueuedRun | null> {
  if (!isWebhookTokenFormat(token)) return null;
  const scraper = await deps.scrapers.findByWebhookHash(deps.tokens.hash(token));
  if (!scraper || !scraper.webhookEnabled) return null;
  const repo = await deps.repos.get(scraper.repoId);
  if (!repo) return null;
  return queueRun(deps, scraper, repo.createdBy, 'webhook', null);
}
