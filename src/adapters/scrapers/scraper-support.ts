import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { tokenFromBytes } from '../../domain/scrapers/webhooks.ts';
import type { IngestFileCreator, RunIds, WebhookTokens } from '../../ports/scraper-collaborators.ts';

/** Webhook tokens from 32 bytes of node:crypto randomness, stored as SHA-256 hex. */
export function cryptoWebhookTokens(): WebhookTokens {
  return {
    generate: () => tokenFromBytes(randomBytes(32)),
    hash: (token) => createHash('sha256').update(token, 'utf8').digest('hex'),
  };
}

export function uuidRunIds(): RunIds {
  return { next: () => randomUUID() };
}

/**
 * Auto-import needs `ingest-files`, which the ingestion pipeline brings. Until it is wired in, an
 * auto-import is recorded on the run as failed with this reason, and the CSV stays on the run.
 */
export function ingestionNotInstalled(): IngestFileCreator {
  return {
    async createFromCsv() {
      throw new Error('the ingestion pipeline is not installed in this build; the CSV is kept on the run');
    },
  };
}
