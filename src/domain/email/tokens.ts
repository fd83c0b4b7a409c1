// Confirmation and unsubscribe tokens: 32 random bytes, base64url in the link, SHA-256 at rest
// (made and hashed by src/adapters/security/email-tokens.ts).
// A token is the only authority of the public routes that take it, so a leaked database copy must
// not hold usable tokens; a plain hash is enough because the token has 256 bits of entropy.

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A token from a URL, or null when it cannot be one (the route answers 404 as for an unknown one). */
export function parseEmailToken(value: unknown): string | null {
  return typeof value === 'string' && TOKEN_PATTERN.test(value) ? value : null;
}

/** How long a confirmation link works. */
export const CONFIRMATION_TTL_MS = 48 * 3600 * 1000;
