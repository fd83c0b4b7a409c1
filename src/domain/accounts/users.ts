import { ValidationError } from '../errors.ts';

export type Role = 'admin' | 'user';

/** Trust levels as the spec names them; admins and level 5 are unlimited. */
export const TRUST_LEVELS = {
  0: 'Untrusted',
  1: 'Basic',
  2: 'Regular',
  3: 'Trusted',
  4: 'Power User',
  5: 'Unlimited',
} as const;
export type TrustLevel = keyof typeof TRUST_LEVELS;

/** A trust level as sent by a client (a number, or a form's text): 0 to 5, else a 400 naming the field. */
export function parseTrustLevel(value: unknown): TrustLevel {
  const level = typeof value === 'string' && /^\d$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof level !== 'number' || !Number.isInteger(level) || level < 0 || level > 5) {
    throw new ValidationError(
      `trustLevel must be a whole number from 0 to 5 (got ${JSON.stringify(value) ?? 'nothing'})`,
      {
        field: 'trustLevel',
        code: 'INVALID_TRUST_LEVEL',
      },
    );
  }
  return level as TrustLevel;
}

export const MIN_PASSWORD_LENGTH = 10;
const MAX_PASSWORD_LENGTH = 256;

export function normaliseEmail(raw: string): string {
  const email = raw.trim();
  // Deliberately loose: one @, something on both sides, a dot in the domain. Delivery proves the rest.
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) {
    throw new ValidationError(`"${raw}" is not an email address`, { field: 'email' });
  }
  return email;
}

export function checkPasswordStrength(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`, {
      field: 'password',
    });
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new ValidationError(`the password must have at most ${MAX_PASSWORD_LENGTH} characters`, {
      field: 'password',
    });
  }
}
