import { createHash, randomBytes } from 'node:crypto';

// Confirmation and unsubscribe tokens: 32 random bytes, base64url in the link, SHA-256 at rest.
// A token is the only authority of the public routes that take it, so a leaked database copy must
// not hold usable tokens; a plain hash is enough because the token has 256 bits of entropy.

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

type EmailToken = { token: string; hash: Buffer };

export function newEmailToken(): EmailToken {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashEmailToken(token) };
}

export function hashEmailToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** A token from a URL, or null when it cannot be one (the route answers 404 as for an unknown one). */
export function parseEmailToken(value: unknown): string | null {
  return typeof value === 'string' && TOKEN_PATTERN.test(value) ? value : null;
}

/** How long a confirmation link works. */
export const CONFIRMATION_TTL_MS = 48 * 3600 * 1000;
