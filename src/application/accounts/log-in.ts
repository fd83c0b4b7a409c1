import { UnauthorizedError, type Viewer } from '../../domain/access.ts';
import type { AccessPolicy, RateWindow } from '../../domain/accounts/quotas.ts';
import { decideRate, isLoginRetry, RateLimitedError } from '../../domain/accounts/rate-limits.ts';
import type { PasswordHasher } from '../../ports/accounts/password-hasher.ts';
import type { RateLimitCounter } from '../../ports/accounts/rate-limit-counter.ts';
import type { SessionStore } from '../../ports/accounts/session-store.ts';
import type { TokenSigner } from '../../ports/accounts/token-signer.ts';
import type { StoredUser, UserStore } from '../../ports/accounts/user-store.ts';
import type { Clock } from '../../ports/clock.ts';

export type LoginDeps = {
  users: UserStore;
  sessions: SessionStore;
  tokens: TokenSigner;
  passwords: PasswordHasher;
  rateLimits: RateLimitCounter;
  policy: AccessPolicy;
  clock: Clock;
};

type LoginResult = { token: string; exp: number; user: StoredUser; sessionId: string };

// Verified against when the email is unknown, so that both answers take the same time.
let decoyHash: Promise<string> | undefined;

/** Counts one hit on each key and refuses (429) when any of them is over its windows. */
export async function throttle(
  deps: Pick<LoginDeps, 'rateLimits' | 'clock'>,
  keys: (readonly [string, RateWindow[]])[],
  message: string,
): Promise<void> {
  const now = deps.clock.now();
  for (const [key, windows] of keys) {
    const decision = decideRate(await deps.rateLimits.hit(key, windows, now), now);
    if (!decision.allowed) throw new RateLimitedError(decision, message);
  }
}

/**
 * Counts the attempt per client IP and email together first: guessing one account's password from
 * one address is slowed whether it succeeds or not, and the wait grows with the windows (a minute,
 * an hour, a day). A retry (the same account tried from the same address within the pair's shortest
 * window) also counts against the address's cap on retries, so guessing across many accounts from
 * one address is slowed too; a first try never does, so the others behind a shared address still
 * log in while its guessed accounts stay throttled (issue 30 §6). There is no count per email alone,
 * so wrong guesses from one address never lock the owner out of their account from another.
 */
export async function logIn(
  deps: LoginDeps,
  input: { email: string; password: string; clientIp: string },
): Promise<LoginResult> {
  const email = input.email.trim().toLowerCase();
  const { perIpAndEmail, perIp } = deps.policy.loginAttempts;
  const message = 'Too many login attempts; try again later';
  const now = deps.clock.now();
  const pair = await deps.rateLimits.hit(`login-ip-email:${input.clientIp} ${email}`, perIpAndEmail, now);
  const refused = decideRate(pair, now);
  if (!refused.allowed) throw new RateLimitedError(refused, message);
  if (isLoginRetry(pair)) await throttle(deps, [[`login-ip-retries:${input.clientIp}`, perIp]], message);

  const user = await deps.users.findByEmail(email);
  decoyHash ??= deps.passwords.hash('decoy password that matches nothing');
  const valid = await deps.passwords.verify(input.password, user?.passwordHash ?? (await decoyHash));
  if (!user || !valid)
    throw new UnauthorizedError('The email or password is incorrect', 'INVALID_CREDENTIALS');
  return issueToken(deps, user);
}

/**
 * A new session and its signed token. `loggedInAt` is when the login it continues happened (now
 * for a login); the token never outlives that login by more than the policy's sessionMaxAgeSeconds.
 */
async function issueToken(
  deps: Pick<LoginDeps, 'sessions' | 'tokens' | 'policy' | 'clock'>,
  user: StoredUser,
  loggedInAt: Date = deps.clock.now(),
): Promise<LoginResult> {
  const now = deps.clock.now();
  const iat = Math.floor(now.getTime() / 1000);
  const lastAllowed = Math.floor(loggedInAt.getTime() / 1000) + deps.policy.sessionMaxAgeSeconds;
  const exp = Math.min(iat + deps.policy.tokenTtlSeconds, lastAllowed);
  const session = await deps.sessions.create(user.id, new Date(exp * 1000), loggedInAt);
  const token = deps.tokens.sign({ sub: user.id, sid: session.id, iat, exp });
  return {
    token,
    exp,
    user: { id: user.id, email: user.email, role: user.role, trustLevel: user.trustLevel },
    sessionId: session.id,
  };
}

/**
 * POST /api/users/refresh-token: a fresh token for a live session, in a new session that keeps the
 * time of the original login; the old session is revoked. Refused (401 SESSION_TOO_OLD) once the
 * login is sessionMaxAgeSeconds old, or nearly (less than a minute left): then the user logs in again.
 */
export async function refreshSession(
  deps: Pick<LoginDeps, 'sessions' | 'tokens' | 'policy' | 'clock'>,
  user: StoredUser,
  sessionId: string,
): Promise<LoginResult> {
  const loggedInAt = sessionId ? await deps.sessions.loggedInAt(sessionId) : null;
  if (!loggedInAt) throw new UnauthorizedError('The session has ended; log in again', 'SESSION_REVOKED');
  const end = loggedInAt.getTime() + deps.policy.sessionMaxAgeSeconds * 1000;
  if (end - deps.clock.now().getTime() < 60_000) {
    throw new UnauthorizedError(
      `A login can be refreshed for at most ${deps.policy.sessionMaxAgeSeconds} seconds; log in again`,
      'SESSION_TOO_OLD',
    );
  }
  const result = await issueToken(deps, user, loggedInAt);
  await deps.sessions.revoke(sessionId);
  return result;
}

export type Authentication =
  | { viewer: Exclude<Viewer, null>; sessionId: string; exp: number }
  | { viewer: null; problem: 'invalid' | 'expired' | 'revoked' };

/** A token is good while its signature holds, it has not expired, and its session is live. */
export async function authenticateToken(
  deps: Pick<LoginDeps, 'sessions' | 'tokens' | 'clock'>,
  token: string,
): Promise<Authentication> {
  const check = deps.tokens.verify(token, deps.clock.now());
  if (!check.ok) return { viewer: null, problem: check.reason };
  const user = await deps.sessions.findUser(check.claims.sid);
  if (!user || user.id !== check.claims.sub) return { viewer: null, problem: 'revoked' };
  return { viewer: user, sessionId: check.claims.sid, exp: check.claims.exp };
}
