import { UnauthorizedError, type Viewer } from '../domain/access.ts';
import type { AccessPolicy } from '../domain/quotas.ts';
import { decideRate, RateLimitedError } from '../domain/rate-limits.ts';
import type { PasswordHasher } from '../ports/password-hasher.ts';
import type { RateLimitCounter } from '../ports/rate-limit-counter.ts';
import type { SessionStore } from '../ports/session-store.ts';
import type { TokenSigner } from '../ports/token-signer.ts';
import type { StoredUser, UserStore } from '../ports/user-store.ts';

export type LoginDeps = {
  users: UserStore;
  sessions: SessionStore;
  tokens: TokenSigner;
  passwords: PasswordHasher;
  rateLimits: RateLimitCounter;
  policy: AccessPolicy;
  now: () => Date;
};

export type LoginResult = { token: string; exp: number; user: StoredUser; sessionId: string };

// Verified against when the email is unknown, so that both answers take the same time.
let decoyHash: Promise<string> | undefined;

/** Counts the attempt per email and per IP first: guessing is slowed whether it succeeds or not. */
export async function logIn(
  deps: LoginDeps,
  input: { email: string; password: string; clientIp: string },
): Promise<LoginResult> {
  const now = deps.now();
  const email = input.email.trim().toLowerCase();
  const { perEmail, perIp } = deps.policy.loginAttempts;
  for (const [key, windows] of [
    [`login-email:${email}`, perEmail],
    [`login-ip:${input.clientIp}`, perIp],
  ] as const) {
    const decision = decideRate(await deps.rateLimits.hit(key, windows, now), now);
    if (!decision.allowed) throw new RateLimitedError(decision, 'Too many login attempts; try again later');
  }

  const user = await deps.users.findByEmail(email);
  decoyHash ??= deps.passwords.hash('decoy password that matches nothing');
  const valid = await deps.passwords.verify(input.password, user?.passwordHash ?? (await decoyHash));
  if (!user || !valid)
    throw new UnauthorizedError('The email or password is incorrect', 'INVALID_CREDENTIALS');
  return issueToken(deps, user);
}

/** A new session and its signed token. */
export async function issueToken(
  deps: Pick<LoginDeps, 'sessions' | 'tokens' | 'policy' | 'now'>,
  user: StoredUser,
): Promise<LoginResult> {
  const now = deps.now();
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + deps.policy.tokenTtlSeconds;
  const session = await deps.sessions.create(user.id, new Date(exp * 1000));
  const token = deps.tokens.sign({ sub: user.id, sid: session.id, iat, exp });
  return {
    token,
    exp,
    user: { id: user.id, email: user.email, role: user.role, trustLevel: user.trustLevel },
    sessionId: session.id,
  };
}

export type Authentication =
  | { viewer: Exclude<Viewer, null>; sessionId: string; exp: number }
  | { viewer: null; problem: 'invalid' | 'expired' | 'revoked' };

/** A token is good while its signature holds, it has not expired, and its session is live. */
export async function authenticateToken(
  deps: Pick<LoginDeps, 'sessions' | 'tokens' | 'now'>,
  token: string,
): Promise<Authentication> {
  const check = deps.tokens.verify(token, deps.now());
  if (!check.ok) return { viewer: null, problem: check.reason };
  const user = await deps.sessions.findUser(check.claims.sid);
  if (!user || user.id !== check.claims.sub) return { viewer: null, problem: 'revoked' };
  return { viewer: user, sessionId: check.claims.sid, exp: check.claims.exp };
}
