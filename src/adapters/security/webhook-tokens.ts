import { createHash, randomBytes } from 'node:crypto';
import { tokenFromBytes } from '../../domain/ingest/webhook-tokens.ts';
import type { WebhookTokens } from '../../ports/webhook-tokens.ts';

// A webhook token is the credential in the URL: 32 random bytes as 64 hex characters. Only its
// SHA-256 is stored, so a database leak does not hand out working trigger URLs; the lookup by hash
// is an index equality on a value derived from a secret, which leaks no timing about the token.
// Scrapers and scheduled imports use this one adapter.

export const webhookTokens: WebhookTokens = {
  generate() {
    const token = tokenFromBytes(randomBytes(32));
    return { token, hash: this.hash(token) };
  },
  hash(token) {
    return createHash('sha256').update(token, 'utf8').digest('hex');
  },
};
