import t from 'tap';
import { authenticateToken, logIn, refreshSession } from '../../../../src/application/accounts/log-in.ts';
import { accountUseCaseDeps, anAccount, PASSWORD, perMinute, START } from './account-use-case-fakes.ts';

// Logging in, refreshing a login and checking a token, on the shared in-memory fakes: what a login
// issues, the same refusal for a wrong password and an unknown address, and the throttling of
// retries per account and address (issue 30 §6).

const HOME = '192.0.2.1';
const WRONG = {
  name: 'UnauthorizedError',
  code: 'INVALID_CREDENTIALS',
  message: 'The email or password is incorrect',
};
const THROTTLED = { name: 'RateLimitedError', kind: 'rate_limited', decision: { limitType: 'burst' } };

t.test('a login opens a session and signs a token for it', async (t) => {
  const deps = accountUseCaseDeps();
  const id = await anAccount(deps);
  const login = await logIn(deps, { email: '  ALICE@example.org ', password: PASSWORD, clientIp: HOME });
  const iat = START.getTime() / 1000;
  t.same(login.user, { id, email: 'alice@example.org', role: 'user', trustLevel: 1 }, 'no password hash');
  t.equal(login.exp, iat + deps.policy.tokenTtlSeconds);
  t.same(deps.tokens.issued, [{ sub: id, sid: login.sessionId, iat, exp: login.exp }]);
  t.same(await deps.sessions.loggedInAt(login.sessionId), START);
  t.match(await authenticateToken(deps, login.token), {
    viewer: { id, role: 'user' },
    sessionId: login.sessionId,
    exp: login.exp,
  });
});

t.test('a wrong password and an unknown address are one refusal', async (t) => {
  const deps = accountUseCaseDeps();
  await anAccount(deps);
  await t.rejects(
    logIn(deps, { email: 'alice@example.org', password: 'not the password', clientIp: HOME }),
    WRONG,
  );
  await t.rejects(logIn(deps, { email: 'nobody@example.org', password: PASSWORD, clientIp: HOME }), WRONG);
  t.same(deps.tokens.issued, [], 'nothing signed');
});

t.test('retries of one account from one address are throttled, right password or not', async (t) => {
  const deps = accountUseCaseDeps((policy) => ({
    ...policy,
    loginAttempts: { perIpAndEmail: perMinute(3), perIp: perMinute(100) },
  }));
  await anAccount(deps);
  const attempt = (password: string, clientIp = HOME) =>
    logIn(deps, { email: 'alice@example.org', password, clientIp });
  for (let i = 0; i < 3; i += 1) await t.rejects(attempt('wrong password!'), WRONG);
  await t.rejects(attempt(PASSWORD), THROTTLED, 'the fourth attempt waits, even with the password');
  t.ok(await attempt(PASSWORD, '198.51.100.7'), 'the owner still logs in from elsewhere');
  deps.clock.advance(60_000);
  t.ok(await attempt(PASSWORD), 'and from the address again once the minute is over');
});

t.test("an address's retries across accounts are capped; first tries are not", async (t) => {
  const deps = accountUseCaseDeps((policy) => ({
    ...policy,
    loginAttempts: { perIpAndEmail: perMinute(10), perIp: perMinute(3) },
  }));
  for (const name of ['a', 'b', 'c', 'd']) await anAccount(deps, `${name}@example.org`);
  const attempt = (name: string, password = 'wrong password!') =>
    logIn(deps, { email: `${name}@example.org`, password, clientIp: HOME });
  // First tries of three accounts and a retry of each: the address's three retries.
  for (const name of ['a', 'b', 'c']) {
    await t.rejects(attempt(name), WRONG);
    await t.rejects(attempt(name), WRONG, `${name}: a retry, counted against the address`);
  }
  await t.rejects(attempt('a', PASSWORD), THROTTLED, 'a fourth retry from the address waits');
  t.ok(await attempt('d', PASSWORD), 'a first try for another account from the address does not');
});

t.test('a refresh continues the login in a new session and ends the old one', async (t) => {
  const deps = accountUseCaseDeps();
  await anAccount(deps);
  const login = await logIn(deps, { email: 'alice@example.org', password: PASSWORD, clientIp: HOME });
  deps.clock.advance(3_600_000);
  const refreshed = await refreshSession(deps, login.user, login.sessionId);
  t.not(refreshed.sessionId, login.sessionId);
  t.same(await deps.sessions.loggedInAt(refreshed.sessionId), START, 'the time of the login it continues');
  t.equal(refreshed.exp, deps.clock.now().getTime() / 1000 + deps.policy.tokenTtlSeconds);
  t.match(await authenticateToken(deps, login.token), { viewer: null, problem: 'revoked' });
  t.match(await authenticateToken(deps, refreshed.token), { viewer: { id: login.user.id } });
  await t.rejects(refreshSession(deps, login.user, login.sessionId), { code: 'SESSION_REVOKED' });
});

t.test('a login is kept alive for sessionMaxAgeSeconds at most', async (t) => {
  const deps = accountUseCaseDeps();
  await anAccount(deps);
  const maxAge = deps.policy.sessionMaxAgeSeconds;
  const ttl = deps.policy.tokenTtlSeconds;
  let login = await logIn(deps, { email: 'alice@example.org', password: PASSWORD, clientIp: HOME });
  // Refresh just before each token expires, until the login is nearly maxAge old.
  while ((deps.clock.now().getTime() - START.getTime()) / 1000 + ttl < maxAge) {
    deps.clock.advance((ttl - 60) * 1000);
    login = await refreshSession(deps, login.user, login.sessionId);
  }
  t.equal(login.exp, START.getTime() / 1000 + maxAge, 'the last token ends with the login');
  deps.clock.at = new Date(START.getTime() + (maxAge - 30) * 1000);
  await t.rejects(refreshSession(deps, login.user, login.sessionId), { code: 'SESSION_TOO_OLD' });
});

t.test('a token is refused once expired, and when it is not ours', async (t) => {
  const deps = accountUseCaseDeps();
  await anAccount(deps);
  const login = await logIn(deps, { email: 'alice@example.org', password: PASSWORD, clientIp: HOME });
  t.same(await authenticateToken(deps, 'forged'), { viewer: null, problem: 'invalid' });
  deps.clock.at = new Date(login.exp * 1000);
  t.same(await authenticateToken(deps, login.token), { viewer: null, problem: 'expired' });
});
