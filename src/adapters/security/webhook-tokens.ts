import { createHash, randomBytes } from 'node:crypto';
import type { WebhookTokens } from '../../ports/schedule-store.ts';

// A webhook token is the credential in the URL: 32 random bytes as 64 hex characters. Only its
// SHA-256 is stored, so a database leak does not hand out working trigger URLs; the lookup by hash
// is an index equality on a value derived from a secret, which leaks no timing about the token.

export const webhookTokens: WebhookTokens = {
  generate() {
    const token = randomBytes(32).toString('hex');
    return { token, hash: this.hash(token) };
  },
  hash(token) {
    return createHash('sha256').update(token).digest('hex');
  },
};
