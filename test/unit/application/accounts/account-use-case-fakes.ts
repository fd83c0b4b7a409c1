import path from 'node:path';
import { loadAccessPolicy } from '../../../../src/adapters/config/access-policy.ts';
import { projectRoot } from '../../../../src/adapters/config/environment.ts';
import type { AccessPolicy, RateWindow } from '../../../../src/domain/accounts/quotas.ts';
import type { Role, TrustLevel } from '../../../../src/domain/accounts/users.ts';
import { memoryAccounts } from '../../../fakes/accounts/accounts.ts';
import { plainPasswordHasher } from '../../../fakes/accounts/password-hasher.ts';
import { memoryRateLimitCounter } from '../../../fakes/accounts/rate-limit-counter.ts';
import { memoryTokenSigner } from '../../../fakes/accounts/token-signer.ts';

// The account use cases' collaborators for the fast tier: the shared in-memory fakes of the
// accounts ports, each of which passes the behaviour suite its Postgres (or real) adapter passes,
// on a clock the test moves, with the limits of config/quotas.yaml unless the test sets its own.

export const PASSWORD = 'correct horse battery staple';
export const START = new Date('2030-01-01T12:00:00.000Z');

/** A clock the test moves: `at` is now. */
export function testClock(start = START) {
  const clock = {
    at: start,
    now: () => new Date(clock.at),
    advance: (ms: number) => void (clock.at = new Date(clock.at.getTime() + ms)),
  };
  return clock;
}

const configPolicy = loadAccessPolicy(path.join(projectRoot, 'config', 'quotas.yaml'));

/** A burst window (a minute) of `limit`: the small limits a throttling test counts to. */
export const perMinute = (limit: number): RateWindow[] => [{ name: 'burst', seconds: 60, limit }];

export function accountUseCaseDeps(change: (policy: AccessPolicy) => AccessPolicy = (policy) => policy) {
  const clock = testClock();
  return {
    ...memoryAccounts(clock),
    passwords: plainPasswordHasher(),
    tokens: memoryTokenSigner(),
    rateLimits: memoryRateLimitCounter(),
    policy: change(configPolicy),
    clock,
  };
}

export type AccountUseCaseDeps = ReturnType<typeof accountUseCaseDeps>;

/** An account with PASSWORD, stored through the port as an admin tool would: its id. */
export async function anAccount(
  deps: AccountUseCaseDeps,
  email = 'alice@example.org',
  standing: { role?: Role; trustLevel?: TrustLevel } = {},
): Promise<number> {
  const user = await deps.users.upsert({
    email,
    passwordHash: await deps.passwords.hash(PASSWORD),
    role: standing.role ?? 'user',
    trustLevel: standing.trustLevel ?? 1,
  });
  return user.id;
}
