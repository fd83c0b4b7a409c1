import { createHash, randomBytes } from 'node:crypto';
import type { EmailTokens } from '../../ports/email/email-tokens.ts';

// 32 random bytes, base64url in the link (43 characters: domain/email/tokens.ts#parseEmailToken),
// SHA-256 at rest.

const hash = (token: string): Buffer => createHash('sha256').update(token).digest();

export const sha256EmailTokens: EmailTokens = {
  issue() {
    const token = randomBytes(32).toString('base64url');
    return { token, hash: hash(token) };
  },
  hash,
};
