import { checkPasswordStrength, normaliseEmail } from '../domain/users.ts';
import type { PasswordHasher } from '../ports/password-hasher.ts';
import type { StoredUser, UserStore } from '../ports/user-store.ts';

/** Creates an administrator, or promotes an existing account and resets its password. */
export async function createAdmin(
  deps: { users: UserStore; passwords: PasswordHasher },
  input: { email: string; password: string },
): Promise<StoredUser & { created: boolean }> {
  const email = normaliseEmail(input.email);
  checkPasswordStrength(input.password);
  const passwordHash = await deps.passwords.hash(input.password);
  return deps.users.upsert({ email, passwordHash, role: 'admin', trustLevel: 5 });
}
