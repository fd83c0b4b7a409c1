import { randomBytes } from 'node:crypto';
import type { PasswordHasher } from '../../../src/ports/accounts/password-hasher.ts';

/**
 * A PasswordHasher with no work factor, for use-case tests: a salted record that names the password
 * (no secret in tests is real), so each hash differs and only the same password verifies, as with
 * scryptPasswordHasher; it passes the same behaviour suite (test/contracts/accounts/password-hasher.ts)
 * in microseconds instead of scrypt's tens of milliseconds. `hashed` counts the hashes made.
 */
export function plainPasswordHasher(): PasswordHasher & { hashed: number } {
  const hasher = {
    hashed: 0,
    async hash(password: string) {
      hasher.hashed += 1;
      return `plain$${randomBytes(6).toString('base64url')}$${Buffer.from(password.normalize('NFC')).toString('base64url')}`;
    },
    async verify(password: string, stored: string) {
      const [scheme, salt, encoded] = stored.split('$');
      if (scheme !== 'plain' || !salt || encoded === undefined) return false;
      return Buffer.from(password.normalize('NFC')).toString('base64url') === encoded;
    },
  };
  return hasher;
}
