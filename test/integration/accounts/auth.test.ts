import { pinnedClock } from '../../helpers/app.ts';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { hmacTokenSigner } from '../../../src/adapters/security/hmac-token-signer.ts';
import { accountsHttp } from '../../../src/adapters/http/accounts/account-hooks.ts';
import { buildHttpApp } from '../../../src/adapters/http/app.ts';
import { REGISTRATION_MESSAGE } from '../../../src/application/accounts/register-account.ts';
import { composeAccounts } from '../../helpers/compose.ts';
import { testConfig } from '../../helpers/app.ts';
import { accountsApp, PASSWORD, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';

t.test('login, me and logout', async (t) => {
  const { app, db, createUser } = await accountsApp(t);
  const user = await createUser({ email: 'Alice@Example.org' });

  const login = await app.inject({
    method: 'POST',
    url: '/api/users/login',
    payload: { email: 'alice@example.org', password: PASSWORD },
  });
  t.equal(login.statusCode, 200, login.body);
  const body = login.json();
  t.match(body, {
    token: String,
    exp: Number,
    user: { id: user.id, email: 'Alice@Example.org', role: 'user', trustLevel: 1 },
  });
  t.notOk('passwordHash' in body.user, 'no hash in the answer');
  const cookie = login.cookies.find((c) => c.name === 'payload-token');
  t.ok(cookie, 'sets the payload-token cookie');
  t.equal(cookie?.value, body.token);
  t.equal(cookie?.httpOnly, true);
  t.equal(cookie?.sameSite, 'Lax');
  t.notOk(cookie?.secure, 'not Secure over plain HTTP');
  t.equal(cookie?.path, '/');

  t.test('the cookie, Bearer and JWT schemes all authenticate', async (t) => {
    for (const headers of [
      { cookie: `payload-token=${body.token}` },
      { authorization: `Bearer ${body.token}` },
      { authorization: `JWT ${body.token}` },
    ]) {
      const me = await app.inject({ method: 'GET', url: '/api/users/me', headers });
      t.equal(me.statusCode, 200);
      t.equal(me.json().user.id, user.id, JSON.stringify(headers).slice(0, 20));
      t.equal(me.json().exp, body.exp);
    }
  });

  t.test('anonymous me is a null user', async (t) => {
    const me = await app.inject({ method: 'GET', url: '/api/users/me' });
    t.equal(me.statusCode, 200);
    t.same(me.json(), { user: null });
  });

  t.test('Secure cookie when served over HTTPS (behind a trusted proxy)', async (t) => {
    // Apps of the accounts routes alone on this test's database: the whole service is not needed.
    const other = await createUser();
    const loginOver = async (trustProxy: boolean) => {
      const proxied = await buildHttpApp(
        {
          version: 'test',
          features: [
            accountsHttp(composeAccounts(testConfig({ sessionSecret: TEST_SESSION_SECRET }), db.pool)),
          ],
        },
        { logLevel: 'silent', bodyLimitBytes: 1024 * 1024, trustProxy },
      );
      t.teardown(() => proxied.close());
      const response = await proxied.inject({
        method: 'POST',
        url: '/api/users/login',
        payload: { email: other.email, password: PASSWORD },
        headers: { 'x-forwarded-proto': 'https' },
      });
      t.equal(response.statusCode, 200);
      return response.cookies.find((c) => c.name === 'payload-token');
    };
    t.equal((await loginOver(true))?.secure, true, 'HTTPS at the proxy: Secure');
    t.notOk((await loginOver(false))?.secure, 'an untrusted forwarded header does not make it Secure');
  });

  t.test('logout revokes the token and clears the cookie', async (t) => {
    const token = (
      await app.inject({
        method: 'POST',
        url: '/api/users/login',
        payload: { email: user.email, password: PASSWORD },
      })
    ).json().token;
    const out = await app.inject({
      method: 'POST',
      url: '/api/users/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    t.equal(out.statusCode, 200);
    const cleared = out.cookies.find((c) => c.name === 'payload-token');
    t.equal(cleared?.value, '');
    const me = await app.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { authorization: `Bearer ${token}` },
    });
    t.same(me.json(), { user: null }, 'the old token no longer works');
    const change = await app.inject({
      method: 'POST',
      url: '/api/users/change-password',
      headers: { authorization: `Bearer ${token}` },
      payload: { currentPassword: PASSWORD, newPassword: 'another long password' },
    });
    t.equal(change.statusCode, 401);
    t.equal(change.json().code, 'TOKEN_REVOKED');
    const still = await app.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { authorization: `Bearer ${body.token}` },
    });
    t.equal(still.json().user.id, user.id, 'other sessions are untouched');
  });
});

t.test('bad credentials', async (t) => {
  const { app, createUser } = await accountsApp(t);
  const user = await createUser();

  const wrong = await app.inject({
    method: 'POST',
    url: '/api/users/login',
    payload: { email: user.email, password: 'wrong password!' },
  });
  const unknown = await app.inject({
    method: 'POST',
    url: '/api/users/login',
    payload: { email: 'nobody@example.org', password: 'wrong password!' },
  });
  t.equal(wrong.statusCode, 401);
  t.equal(unknown.statusCode, 401);
  t.same(wrong.json(), unknown.json(), 'a wrong password and an unknown email look the same');
  t.same(wrong.json(), {
    error: 'Unauthorized',
    message: 'The email or password is incorrect',
    code: 'INVALID_CREDENTIALS',
  });
  t.equal(wrong.cookies.length, 0);

  const missing = await app.inject({
    method: 'POST',
    url: '/api/users/login',
    payload: { email: user.email },
  });
  t.equal(missing.statusCode, 400);
  t.match(missing.json().message, /password/);
});

t.test('expired, forged and deleted-user tokens', async (t) => {
  const { app, db, createUser, login } = await accountsApp(t);
  const user = await createUser();
  const token = await login(user);
  const [, payload] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
  const quotas = (authorization: string) =>
    app.inject({ method: 'GET', url: '/api/account/deletion-summary', headers: { authorization } });

  t.test('expired: signed with the real secret, for a live session, but past exp', async (t) => {
    const expired = hmacTokenSigner(TEST_SESSION_SECRET).sign({
      ...claims,
      exp: Math.floor(Date.now() / 1000) - 1,
    });
    const response = await quotas(`Bearer ${expired}`);
    t.equal(response.statusCode, 401);
    t.equal(response.json().code, 'TOKEN_EXPIRED');
  });

  t.test('forged: another secret, a changed payload, alg none', async (t) => {
    const otherSecret = hmacTokenSigner('another-secret-of-at-least-32-characters!!').sign(claims);
    const [header, , signature] = token.split('.');
    const admin = Buffer.from(JSON.stringify({ ...claims, sub: claims.sub + 1 })).toString('base64url');
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    for (const forged of [otherSecret, `${header}.${admin}.${signature}`, none, 'garbage', `${token}x`]) {
      const response = await quotas(`Bearer ${forged}`);
      t.equal(response.statusCode, 401, forged.slice(0, 30));
      t.equal(response.json().code, 'TOKEN_INVALID');
    }
  });

  t.test('a session that outlived its database expiry is refused', async (t) => {
    const other = await login(user);
    await db.pool.query(sql.unsafe`update sessions set expires_at = now() - interval '1 second'`);
    const response = await quotas(`Bearer ${other}`);
    t.equal(response.statusCode, 401);
    t.equal(response.json().code, 'TOKEN_REVOKED');
  });

  t.test("a deleted user's token is refused", async (t) => {
    const victim = await createUser();
    const victimToken = await login(victim);
    await db.pool.query(sql.unsafe`delete from users where id = ${victim.id}`);
    const response = await quotas(`Bearer ${victimToken}`);
    t.equal(response.statusCode, 401);
    t.equal(response.json().code, 'TOKEN_REVOKED');
    const me = await app.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { authorization: `Bearer ${victimToken}` },
    });
    t.same(me.json(), { user: null });
  });
});

t.test('registration is enumeration-safe', async (t) => {
  const { app, db, createUser } = await accountsApp(t, {
    policy: (p) => {
      p.defaultTrustLevel = 2;
    },
  });
  const existing = await createUser({ email: 'taken@example.org' });
  const register = (email: string, password = 'a brand new password') =>
    app.inject({ method: 'POST', url: '/api/auth/register', payload: { email, password } });

  const fresh = await register('new@example.org');
  const taken = await register('TAKEN@example.org');
  t.equal(fresh.statusCode, 200);
  t.equal(taken.statusCode, fresh.statusCode, 'same status');
  t.same(taken.json(), fresh.json(), 'same body');
  t.same(fresh.json(), { message: REGISTRATION_MESSAGE });
  t.same(Object.keys(taken.headers).sort(), Object.keys(fresh.headers).sort(), 'same headers');

  const rows = await db.pool.any(
    sql.type(row(Type.Object({ email: Type.String(), trust_level: Type.Number(), role: Type.String() })))`
      select email, trust_level, role from users order by id`,
  );
  t.same(
    rows,
    [
      { email: existing.email, trust_level: 1, role: 'user' },
      { email: 'new@example.org', trust_level: 2, role: 'user' },
    ],
    'the new user starts at the configured default level; the taken account is untouched',
  );

  const login = await app.inject({
    method: 'POST',
    url: '/api/users/login',
    payload: { email: 'taken@example.org', password: 'a brand new password' },
  });
  t.equal(login.statusCode, 401, 'registering a taken email does not change its password');

  t.equal((await register('not-an-email')).statusCode, 400);
  t.equal((await register('short@example.org', 'short')).statusCode, 400);
});

t.test('password change, email change and account deletion', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t);
  const user = await createUser();
  const first = await login(user);
  const second = await login(user);

  t.test('password change needs the current password and revokes other sessions', async (t) => {
    const wrong = await as(first)('POST', '/api/users/change-password', {
      currentPassword: 'not the password',
      newPassword: 'a new long password',
    });
    t.equal(wrong.statusCode, 401);
    const weak = await as(first)('POST', '/api/users/change-password', {
      currentPassword: PASSWORD,
      newPassword: 'short',
    });
    t.equal(weak.statusCode, 400);
    const changed = await as(first)('POST', '/api/users/change-password', {
      currentPassword: PASSWORD,
      newPassword: 'a new long password',
    });
    t.equal(changed.statusCode, 200);
    t.equal(changed.json().revokedSessions, 1);
    t.equal((await as(second)('GET', '/api/users/me')).json().user, null, 'the other session is gone');
    t.equal((await as(first)('GET', '/api/users/me')).json().user.id, user.id, 'this session stays');
    user.password = 'a new long password';
  });

  t.test('email change: the same answer whether or not the address is taken', async (t) => {
    const other = await createUser({ email: 'other@example.org' });
    const taken = await as(first)('POST', '/api/users/change-email', {
      password: user.password,
      email: 'OTHER@example.org',
    });
    t.equal(taken.statusCode, 200, 'no 409 EMAIL_UNAVAILABLE that would tell who has an account');
    t.not((await as(first)('GET', '/api/users/me')).json().user.email, 'other@example.org', 'not changed');
    t.not(other.id, user.id);
    const changed = await as(first)('POST', '/api/users/change-email', {
      password: user.password,
      email: 'renamed@example.org',
    });
    t.equal(changed.statusCode, 200, changed.body);
    t.same(changed.json(), taken.json(), 'the very same body');
    t.equal((await as(first)('GET', '/api/users/me')).json().user.email, 'renamed@example.org');
    user.email = 'renamed@example.org';
    await login(user);
  });

  t.test('deletion: summary first, then delete with the password', async (t) => {
    const catalog = await db.pool.one(
      sql.type(row(Type.Object({ id: Type.Number() })))`
        insert into catalogs (slug, title, created_by) values ('mine', 'Mine', ${user.id}) returning id`,
    );
    await db.pool.query(sql.unsafe`
      insert into datasets (catalog_id, slug, title, created_by) values (${catalog.id}, 'ds', 'DS', ${user.id})`);
    const summary = await as(first)('GET', '/api/account/deletion-summary');
    t.equal(summary.statusCode, 200);
    t.same(summary.json().summary, { catalogs: 1, datasets: 1, events: 0, sessions: 2 });

    const refused = await as(first)('POST', '/api/users/delete-account', { password: 'wrong password' });
    t.equal(refused.statusCode, 401);
    const deleted = await as(first)('POST', '/api/users/delete-account', { password: user.password });
    t.equal(deleted.statusCode, 200);
    t.same(deleted.json().deleted, { catalogs: 1, datasets: 1, events: 0, sessions: 2 });
    const left = await db.pool.one(
      sql.type(row(Type.Object({ users: Type.Number(), catalogs: Type.Number() })))`
        select (select count(*) from users where id = ${user.id})::int as users,
               (select count(*) from catalogs)::int as catalogs`,
    );
    t.same(left, { users: 0, catalogs: 0 });
    const after = await as(first)('GET', '/api/account/deletion-summary');
    t.equal(after.statusCode, 401, "the deleted user's token is dead");
  });

  t.test('these routes need a login', async (t) => {
    for (const [method, url, payload] of [
      ['POST', '/api/users/change-password', { currentPassword: 'x', newPassword: 'y' }],
      ['POST', '/api/users/change-email', { password: 'x', email: 'a@b.cd' }],
      ['GET', '/api/account/deletion-summary', undefined],
      ['POST', '/api/users/delete-account', { password: 'x' }],
    ] as const) {
      const response = await as(null)(method, url, payload);
      t.equal(response.statusCode, 401, url);
      t.equal(response.json().code, 'UNAUTHENTICATED');
    }
  });
});

t.test('login attempts are rate limited per client IP and email', async (t) => {
  const { app, createUser } = await accountsApp(t, {
    clock: pinnedClock(),
    policy: (p) => {
      p.loginAttempts = {
        perIpAndEmail: { burst: { seconds: 3600, limit: 3 } },
        perIp: { burst: { seconds: 3600, limit: 100 } },
      };
    },
  });
  const user = await createUser();
  const attempt = (password: string, email = user.email) =>
    app.inject({
      method: 'POST',
      url: '/api/users/login',
      payload: { email, password },
      remoteAddress: '203.0.113.7',
    });
  for (let i = 0; i < 3; i += 1) t.equal((await attempt('wrong password')).statusCode, 401);
  const limited = await attempt(PASSWORD);
  t.equal(limited.statusCode, 429, 'even the right password is refused from this address');
  t.match(limited.json(), {
    success: false,
    error: 'Rate limit exceeded',
    message: String,
    limitType: 'burst',
    retryAfter: /^\d{4}-\d\d-\d\dT/,
  });
  t.ok(Number(limited.headers['retry-after']) > 0);
  t.equal(limited.headers['x-ratelimit-remaining'], '0');
  t.equal(limited.headers['x-ratelimit-limit'], '3');
  t.equal(
    (await attempt('wrong password', 'someone-else@example.org')).statusCode,
    401,
    'other emails still work',
  );
  t.equal(
    (await attempt('wrong password', user.email.toUpperCase())).statusCode,
    429,
    'case does not dodge the limit',
  );
});
