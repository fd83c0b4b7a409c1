// A scraper's webhook: disabling and re-enabling rotates the token (its shape: domain/ingest/webhook-tokens.ts).

type WebhookChange =
  | { action: 'issue' } // off -> on: a new token, shown once
  | { action: 'revoke' } // on -> off: the token is forgotten
  | { action: 'none' };

/**
 * Enabling always issues a fresh token (a re-enable rotates it); disabling drops the stored hash so
 * an old token can never come back to life.
 */
export function webhookChange(currentlyEnabled: boolean, wanted: boolean, rotate = false): WebhookChange {
  if (wanted && (!currentlyEnabled || rotate)) return { action: 'issue' };
  if (!wanted && currentlyEnabled) return { action: 'revoke' };
  return { action: 'none' };
}
