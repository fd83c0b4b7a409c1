import type { Actor } from '../../domain/scrapers/access.ts';
import type { ScraperRun } from '../../domain/scrapers/scrapers.ts';

// What the scrapers feature offers the HTTP routes to start work: a run, a webhook's run, a repo
// sync (src/composition/scrapers.ts binds them to trigger-scraper-run.ts, trigger-scraper-webhook.ts
// and request-repo-sync.ts). The ingest routes take the webhook half for the shared webhook endpoint.

export type ScraperUseCases = {
  triggerRun(actor: Actor, scraperId: number): Promise<{ run: ScraperRun; jobId: string | null }>;
  /** The scraper half of the shared webhook endpoint: null when no live scraper webhook has the token. */
  triggerWebhook(token: string): Promise<{ run: ScraperRun; jobId: string | null } | null>;
  requestSync(
    actor: Actor,
    repoId: number,
  ): Promise<{ repoId: number; jobId: string | null; syncStatus: 'pending' }>;
};
