import { ForbiddenError } from '../../domain/access.ts';
import type { TrustLevel } from '../../domain/accounts/users.ts';
import { checkPasswordStrength, normaliseEmail } from '../../domain/accounts/users.ts';
import type { PasswordHasher } from '../../ports/accounts/password-hasher.ts';
import type { UserStore } from '../../ports/accounts/user-store.ts';

export const REGISTRATION_MESSAGE =
  'If this email address was not registered yet, the account has been created: log in with your password.';

/**
 * Enumeration-safe: whether the email is new or taken, the same work is done (one hash, one insert
 * that does nothing on conflict) and the same answer is given.
 */
export async function registerAccount(
  deps: {
    users: UserStore;
    passwords: PasswordHasher;
    defaultTrustLevel: TrustLevel;
    registrationOpen: boolean;
  },
  input: { email: string; password: string },
): Promise<{ message: string }> {
  if (!deps.registrationOpen) throw new ForbiddenError('Registration is closed', 'REGISTRATION_CLOSED');
  const email = normaliseEmail(input.email);
  checkPasswordStrength(input.password);
  const passwordHash = await deps.passwords.hash(input.password);
  await deps.users.createIfAbsent({ email, passwordHash, trustLevel: deps.defaultTrustLevel });
  return { message: REGISTRATION_MESSAGE };
}
