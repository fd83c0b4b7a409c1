import { checkPasswordStrength, normaliseEmail } from '../../domain/accounts/users.ts';
import type { PasswordHasher } from '../../ports/accounts/password-hasher.ts';
import type { SessionStore } from '../../ports/accounts/session-store.ts';
import type { StoredUser, UserStore } from '../../ports/accounts/user-store.ts';

/**
 * Creates an administrator, or promotes an existing account and resets its password: then every
 * session of the account ends (whoever held a token logs in again with the new password).
 */
export async function createAdmin(
  deps: { users: UserStore; passwords: PasswordHasher; sessions: SessionStore },
  input: { email: string; password: string },
): Promise<StoredUser & { created: boolean }> {
  const email = normaliseEmail(input.email);
  checkPasswordStrength(input.password);
  const passwordHash = await deps.passwords.hash(input.password);
  const user = await deps.users.upsert({ email, passwordHash, role: 'admin', trustLevel: 5 });
  if (!user.created) await deps.sessions.revokeAllForUser(user.id);
  return user;
}
