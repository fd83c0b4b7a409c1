import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { tokenFromBytes } from '../../domain/scrapers/webhooks.ts';
import type { RunIds, WebhookTokens } from '../../ports/scraper-collaborators.ts';

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
