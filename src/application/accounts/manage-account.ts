import { UnauthorizedError } from '../../domain/access.ts';
import type { AccessPolicy } from '../../domain/accounts/quotas.ts';
import { checkPasswordStrength, normaliseEmail } from '../../domain/accounts/users.ts';
import type { PasswordHasher } from '../../ports/accounts/password-hasher.ts';
import type { RateLimitCounter } from '../../ports/accounts/rate-limit-counter.ts';
import type { SessionStore } from '../../ports/accounts/session-store.ts';
import type { DeletionSummary, UserStore } from '../../ports/accounts/user-store.ts';
import { throttle } from './log-in.ts';
import type { Clock } from '../../ports/clock.ts';

// Changes a user makes to their own account. Each one asks for the current password, so a stolen
// session cookie alone cannot take the account over.

export type AccountDeps = {
  users: UserStore;
  sessions: SessionStore;
  passwords: PasswordHasher;
  rateLimits: RateLimitCounter;
  policy: AccessPolicy;
  clock: Clock;
};

/** Who asks: the account and the client address its attempts are counted against. */
type Confirmer = { userId: number; clientIp: string };

/**
 * Counts the attempt per account and per client IP before the password is checked (429 once over
 * the windows), so a stolen session cannot be used to guess the password behind it.
 */
async function confirmPassword(deps: AccountDeps, caller: Confirmer, password: string) {
  const { perAccount, perIp } = deps.policy.passwordConfirmations;
  await throttle(
    deps,
    [
      [`password-confirm-user:${caller.userId}`, perAccount],
      [`password-confirm-ip:${caller.clientIp}`, perIp],
    ],
    'Too many password confirmations; try again later',
  );
  const userId = caller.userId;
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
  input: Confirmer & { sessionId: string; currentPassword: string; newPassword: string },
): Promise<{ revokedSessions: number }> {
  await confirmPassword(deps, input, input.currentPassword);
  checkPasswordStrength(input.newPassword);
  await deps.users.setPassword(input.userId, await deps.passwords.hash(input.newPassword));
  return { revokedSessions: await deps.sessions.revokeAllForUser(input.userId, input.sessionId) };
}

/**
 * The same answer whether or not the address is free, so the route does not tell who has an
 * account: the change is made only when the address is free (the update is tried either way, so
 * both take the same work). What e-mail verification would add: docs/api.md.
 */
export async function changeEmail(
  deps: AccountDeps,
  input: Confirmer & { password: string; newEmail: string },
): Promise<void> {
  await confirmPassword(deps, input, input.password);
  await deps.users.setEmail(input.userId, normaliseEmail(input.newEmail));
}

export function summariseAccountDeletion(deps: AccountDeps, userId: number): Promise<DeletionSummary> {
  return deps.users.deletionSummary(userId);
}

export async function deleteAccount(
  deps: AccountDeps,
  input: Confirmer & { password: string },
): Promise<DeletionSummary> {
  await confirmPassword(deps, input, input.password);
  return deps.users.delete(input.userId);
}
