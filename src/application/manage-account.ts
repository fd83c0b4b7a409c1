import { UnauthorizedError } from '../domain/access.ts';
import { DomainError } from '../domain/errors.ts';
import { checkPasswordStrength, normaliseEmail } from '../domain/users.ts';
import type { PasswordHasher } from '../ports/password-hasher.ts';
import type { SessionStore } from '../ports/session-store.ts';
import type { DeletionSummary, StoredUser, UserStore } from '../ports/user-store.ts';

// Changes a user makes to their own account. Each one asks for the current password, so a stolen
// session cookie alone cannot take the account over.

export type AccountDeps = { users: UserStore; sessions: SessionStore; passwords: PasswordHasher };

async function confirmPassword(deps: AccountDeps, userId: number, password: string) {
  const user = await deps.users.findById(userId);
  if (!user) throw new UnauthorizedError('The account no longer exists', 'ACCOUNT_DELETED');
  if (!(await deps.passwords.verify(password, user.passwordHash))) {
    throw new UnauthorizedError('The current password is incorrect', 'INVALID_CREDENTIALS');
  }
  return user;
}

/** Every other session is revoked: whoever knew the old password is logged out. */
export async function changePassword(
  deps: AccountDeps,
  input: { userId: number; sessionId: string; currentPassword: string; newPassword: string },
): Promise<{ revokedSessions: number }> {
  await confirmPassword(deps, input.userId, input.currentPassword);
  checkPasswordStrength(input.newPassword);
  await deps.users.setPassword(input.userId, await deps.passwords.hash(input.newPassword));
  return { revokedSessions: await deps.sessions.revokeAllForUser(input.userId, input.sessionId) };
}

export async function changeEmail(
  deps: AccountDeps,
  input: { userId: number; password: string; newEmail: string },
): Promise<StoredUser> {
  const user = await confirmPassword(deps, input.userId, input.password);
  const email = normaliseEmail(input.newEmail);
  if (!(await deps.users.setEmail(input.userId, email))) {
    throw new DomainError('conflict', 'That email address cannot be used', { code: 'EMAIL_UNAVAILABLE' });
  }
  return { id: user.id, email, role: user.role, trustLevel: user.trustLevel };
}

export function summariseAccountDeletion(deps: AccountDeps, userId: number): Promise<DeletionSummary> {
  return deps.users.deletionSummary(userId);
}

export async function deleteAccount(
  deps: AccountDeps,
  input: { userId: number; password: string },
): Promise<DeletionSummary> {
  await confirmPassword(deps, input.userId, input.password);
  return deps.users.delete(input.userId);
}
