import { DomainError, NotFoundError } from '../../domain/errors.ts';
import type { Actor } from '../../domain/scrapers/access.ts';
import { canManageScraperRepo } from '../../domain/access.ts';
import { changeWebhookToken } from '../ingest/webhook-token-change.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/**
 * Turns a scraper's webhook on or off. Enabling issues a new token, returned here once and stored
 * only as a hash; disabling forgets it, so disable + enable rotates the token.
 */
export async function setScraperWebhook(
  deps: Pick<ScraperDeps, 'scrapers' | 'repos' | 'tokens'>,
  actor: Actor,
  scraperId: number,
  enabled: boolean,
  options: { rotate?: boolean } = {},
): Promise<{ webhookEnabled: boolean; token?: string }> {
  const scraper = await deps.scrapers.get(scraperId);
  if (!scraper) throw new NotFoundError(`scraper ${scraperId} not found`, { code: 'SCRAPER_NOT_FOUND' });
  const repo = await deps.repos.get(scraper.repoId);
  if (!repo || !canManageScraperRepo(actor, repo)) {
    throw new DomainError('forbidden', 'only the repo owner or an admin may change the webhook', {
      code: 'FORBIDDEN',
    });
  }
  const { token, storedHash } = changeWebhookToken(
    deps.tokens,
    scraper.webhookEnabled,
    enabled,
    options.rotate ?? false,
  );
  if (storedHash !== undefined) await deps.scrapers.setWebhook(scraperId, enabled, storedHash);
  return token === null ? { webhookEnabled: enabled } : { webhookEnabled: true, token };
}
