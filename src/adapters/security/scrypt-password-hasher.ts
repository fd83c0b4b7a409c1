import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import type { PasswordHasher } from '../../ports/accounts/password-hasher.ts';

// scrypt from node:crypto (no native addon to build). The parameters are stored with each hash so
// they can be raised later without invalidating existing passwords.

const DEFAULTS = { N: 2 ** 15, r: 8, p: 1, keyLength: 32 };

function derive(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(
      password.normalize('NFC'),
      salt,
      keyLength,
      { ...options, maxmem: 128 * 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

export function scryptPasswordHasher(params: Partial<typeof DEFAULTS> = {}): PasswordHasher {
  const { N, r, p, keyLength } = { ...DEFAULTS, ...params };
  return {
    async hash(password) {
      const salt = randomBytes(16);
      const key = await derive(password, salt, keyLength, { N, r, p });
      return `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
    },
    async verify(password, stored) {
      const [scheme, n, rr, pp, salt, key] = stored.split('$');
      if (scheme !== 'scrypt' || !n || !rr || !pp || !salt || !key) return false;
      const expected = Buffer.from(key, 'base64');
      const actual = await derive(password, Buffer.from(salt, 'base64'), expected.length, {
        N: Number(n),
        r: Number(rr),
        p: Number(pp),
      });
      return timingSafeEqual(actual, expected);
    },
  };
}
