import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeySecrets } from '../../ports/accounts/api-key-store.ts';

// SHA-256, not scrypt or argon2: the secret is 256 random bits, not a password a person chose, so no
// dictionary or brute force can reach it and a slow hash would only add its cost to every API
// request (docs/decisions.md). The comparison is constant-time all the same.

export function sha256ApiKeySecrets(): ApiKeySecrets {
  const hash = (random: string) => createHash('sha256').update(random).digest();
  return {
    random: () => randomBytes(32).toString('base64url'),
    hash,
    matches: (random, stored) => {
      const presented = hash(random);
      return presented.length === stored.length && timingSafeEqual(presented, stored);
    },
  };
}
