import { webhookChange } from '../../domain/ingest/webhook-tokens.ts';
import type { WebhookTokens } from '../../ports/webhook-tokens.ts';

/**
 * The one implementation of a webhook token's life, for scrapers and scheduled imports alike: the
 * token to show this once (null when none is issued) and the hash to store (null to forget the old
 * token, undefined to keep what is stored).
 */
export function changeWebhookToken(
  tokens: WebhookTokens,
  currentlyEnabled: boolean,
  wanted: boolean,
  rotate = false,
): { token: string | null; storedHash: string | null | undefined } {
  const change = webhookChange(currentlyEnabled, wanted, rotate);
  if (change.action === 'issue') {
    const { token, hash } = tokens.generate();
    return { token, storedHash: hash };
  }
  return { token: null, storedHash: change.action === 'revoke' ? null : undefined };
}
