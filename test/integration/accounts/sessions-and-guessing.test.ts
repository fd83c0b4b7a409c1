import { pinnedClock } from '../../helpers/app.ts';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp, PASSWORD } from '../../helpers/accounts.ts';

// Sessions end when an admin changes a user's standing or password, a login cannot be refreshed
// forever, and password guessing is slowed (login, and the routes that confirm a password) without
// letting an attacker lock the owner out.

// Day-long windows: a test cannot straddle a window's end (they reset at midnight UTC).
const day = (limit: number) => ({ burst: { seconds: 86_400, limit } });

t.test(
  "an admin's password reset, role change, lowered trust level and deletion end the user's sessions",
  async (t) => {
    const { createUser, login, as } = await accountsApp(t);
    const admin = await createUser({ role: 'admin', trustLevel: 5 });
    const adminApi = as(await login(admin));
    const alive = async (token: string) =>
      (await as(token)('GET', '/api/account/deletion-summary')).statusCode === 200;

    for (const [change, payload] of [
      ['password reset', { password: 'a brand new password' }],
      ['role change', { role: 'admin' }],
      ['lowered trust level', { trustLevel: 1 }],
    ] as const) {
      const user = await createUser({ trustLevel: 2 });
      const tokens = [await login(user), await login(user)];
      t.ok(await alive(tokens[0] as string), `${change}: the token works before`);
      const patched = await adminApi('PATCH', `/api/users/${user.id}`, payload);
      t.equal(patched.statusCode, 200, patched.body);
      for (const token of tokens) {
        const after = await as(token)('GET', '/api/account/deletion-summary');
        t.equal(after.statusCode, 401, `${change}: every token of the user stops working`);
      }
    }

    const doomed = await createUser();
    const token = await login(doomed);
    t.equal((await adminApi('DELETE', `/api/users/${doomed.id}`)).statusCode, 200);
    t.equal((await as(token)('GET', '/api/account/deletion-summary')).statusCode, 401, 'deletion: 401');
    t.equal(
      (await adminApi('GET', '/api/account/deletion-summary')).statusCode,
      200,
      "the admin's own stays",
    );
  },
);

t.test(
  'a raised trust level keeps the sessions, and the next request already has the new standing',
  async (t) => {
    const { createUser, login, as } = await accountsApp(t);
    const adminApi = as(await login(await createUser({ role: 'admin', trustLevel: 5 })));
    const user = await createUser({ trustLevel: 1 });
    const api = as(await login(user));
    const limitOf = async () => {
      const answer = await api('GET', '/api/quotas');
      t.equal(answer.statusCode, 200, answer.body);
      return (answer.json() as { quotas: { importJobsPerDay: { limit: number } } }).quotas.importJobsPerDay
        .limit;
    };
    const before = await limitOf();
    t.equal((await api('GET', '/api/scraper-repos')).statusCode, 403, 'level 1: no scraper access');

    t.equal((await adminApi('PATCH', `/api/users/${user.id}`, { trustLevel: 4 })).statusCode, 200);
    const me = await api('GET', '/api/users/me');
    t.equal(me.statusCode, 200, 'the same token still works');
    t.equal((me.json() as { user: { trustLevel: number } }).user.trustLevel, 4, 'and says the new level');
    t.ok((await limitOf()) > before, "the quotas are the new level's on the next request");
    t.not((await api('GET', '/api/scraper-repos')).statusCode, 403, 'level 4 reaches the scrapers at once');
  },
);

t.test('refresh-token renews a login up to sessionMaxAgeSeconds from the login, not forever', async (t) => {
  const maxAge = 7 * 24 * 3600;
  const { db, createUser, login, as } = await accountsApp(t, {
    policy: (p) => {
      p.sessionMaxAgeSeconds = maxAge;
    },
  });
  const user = await createUser();
  const loginTime = async (token: string) => {
    const sid = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).sid as string;
    return db.pool.oneFirst(
      sql.type(row(Type.Object({ at: Type.Number() })))`
        select extract(epoch from logged_in_at)::float8 as at from sessions where id = ${sid}`,
    );
  };
  const age = (token: string, seconds: number) => {
    const sid = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).sid as string;
    return db.pool.query(sql.unsafe`
      update sessions set logged_in_at = now() - make_interval(secs => ${seconds}) where id = ${sid}`);
  };

  const first = await login(user);
  const refreshed = await as(first)('POST', '/api/users/refresh-token');
  t.equal(refreshed.statusCode, 200, refreshed.body);
  const second = refreshed.json().refreshedToken as string;
  t.equal(await loginTime(second), await loginTime(first), 'the new session keeps the time of the login');
  t.equal(
    (await as(first)('GET', '/api/account/deletion-summary')).statusCode,
    401,
    'the old one is revoked',
  );

  // Ten minutes left of the login's maximum: the new token ends with it, not a full lifetime later.
  await age(second, maxAge - 600);
  const capped = await as(second)('POST', '/api/users/refresh-token');
  t.equal(capped.statusCode, 200, capped.body);
  const secondsLeft = (capped.json().exp as number) - Date.now() / 1000;
  t.ok(secondsLeft <= 600 && secondsLeft > 500, `the token ends with the login's maximum (${secondsLeft} s)`);

  const third = capped.json().refreshedToken as string;
  await age(third, maxAge + 1);
  const tooOld = await as(third)('POST', '/api/users/refresh-token');
  t.equal(tooOld.statusCode, 401);
  t.match(tooOld.json(), { code: 'SESSION_TOO_OLD', message: /log in again/ });
  t.equal((await login(user)).length > 0, true, 'logging in again starts a new login');
});

t.test('password-confirming routes are rate limited per account and per IP', async (t) => {
  const { app, createUser, login } = await accountsApp(t, {
    clock: pinnedClock(),
    policy: (p) => {
      p.passwordConfirmations = { perAccount: day(3), perIp: day(8) };
    },
  });
  const send = (token: string, url: string, payload: object, ip: string) =>
    app.inject({
      method: 'POST',
      url,
      payload,
      remoteAddress: ip,
      headers: { authorization: `Bearer ${token}` },
    });

  const victim = await createUser();
  const stolen = await login(victim);
  const guesses = [
    ['/api/users/change-email', { password: 'guess 1', email: 'thief@example.org' }],
    ['/api/users/change-password', { currentPassword: 'guess 2', newPassword: 'a long new password' }],
    ['/api/users/delete-account', { password: 'guess 3' }],
  ] as const;
  for (const [url, payload] of guesses)
    t.equal((await send(stolen, url, payload, '198.51.100.1')).statusCode, 401, `${url}: wrong password`);
  const limited = await send(
    stolen,
    '/api/users/change-password',
    { currentPassword: PASSWORD, newPassword: 'a long new password' },
    '198.51.100.2',
  );
  t.equal(limited.statusCode, 429, 'the account is limited from any address, even with the right password');
  t.ok(Number(limited.headers['retry-after']) > 0, 'with Retry-After');
  t.match(limited.json(), { error: 'Rate limit exceeded', message: /password confirmations/ });

  // Per IP: accounts of one address share its budget (8 here); other addresses keep theirs.
  const accounts = await Promise.all([1, 2, 3].map(() => createUser()));
  const statuses: number[] = [];
  for (const account of accounts) {
    const token = await login(account);
    for (let i = 0; i < 3; i += 1)
      statuses.push(
        (await send(token, '/api/users/delete-account', { password: 'no' }, '198.51.100.9')).statusCode,
      );
  }
  t.same(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 429], 'the ninth from the address is refused');
  const elsewhere = await send(
    await login(await createUser()),
    '/api/users/delete-account',
    { password: 'no' },
    '198.51.100.10',
  );
  t.equal(elsewhere.statusCode, 401, 'another address is not limited');
});

t.test('login throttling slows an attacker without locking the owner out', async (t) => {
  const { app, createUser } = await accountsApp(t, {
    clock: pinnedClock(),
    policy: (p) => {
      p.loginAttempts = { perIpAndEmail: day(10), perIp: day(100) };
    },
  });
  const owner = await createUser();
  const attempt = (password: string, ip: string) =>
    app.inject({
      method: 'POST',
      url: '/api/users/login',
      payload: { email: owner.email, password },
      remoteAddress: ip,
    });
  const attacker = '192.0.2.66';
  for (let i = 0; i < 10; i += 1)
    t.equal((await attempt(`guess ${i}`, attacker)).statusCode, 401, `wrong guess ${i + 1}`);

  const throttled = await attempt(PASSWORD, attacker);
  t.equal(throttled.statusCode, 429, 'the attacker is throttled, even when the guess is right');
  t.ok(Number(throttled.headers['retry-after']) > 0, 'and told how long to wait');

  const fromHome = await attempt(PASSWORD, '192.0.2.10');
  t.equal(fromHome.statusCode, 200, 'the owner logs in from another address after the 10 wrong attempts');
  t.equal(fromHome.json().user.id, owner.id);
  t.equal((await attempt('wrong again', '192.0.2.10')).statusCode, 401, 'the owner still gets plain 401s');
});

t.test(
  'guessing 32 accounts from one address throttles them, not the others behind that address',
  async (t) => {
    // The shipped burst limits (10 per account and address, 30 retries per address) in day-long windows.
    const { app, createUser } = await accountsApp(t, {
      clock: pinnedClock(),
      policy: (p) => {
        p.loginAttempts = { perIpAndEmail: day(10), perIp: day(30) };
      },
    });
    const guessed = await Promise.all(Array.from({ length: 32 }, () => createUser()));
    const colleague = await createUser();
    const office = '198.51.100.20';
    const attempt = (email: string, password: string) =>
      app.inject({
        method: 'POST',
        url: '/api/users/login',
        payload: { email, password },
        remoteAddress: office,
      });
    const statuses = new Map<number, number>();
    for (const user of guessed) {
      for (let i = 0; i < 30; i += 1) {
        const status = (await attempt(user.email, `guess ${i}`)).statusCode;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }
    // Each account's first try, then 30 retries across them all (the address's cap); the rest 429.
    t.same(Object.fromEntries(statuses), { 401: 32 + 30, 429: 32 * 30 - 62 });

    const mine = await attempt(colleague.email, PASSWORD);
    t.equal(mine.statusCode, 200, 'a colleague behind the same address logs in with her password');
    t.equal(mine.json().user.id, colleague.id);
    for (const user of [guessed[0], guessed[31]]) {
      const right = await attempt(user?.email ?? '', PASSWORD);
      t.equal(
        right.statusCode,
        429,
        'a guessed account stays throttled from that address, right password or not',
      );
    }
    const elsewhere = await app.inject({
      method: 'POST',
      url: '/api/users/login',
      payload: { email: guessed[0]?.email, password: PASSWORD },
      remoteAddress: '192.0.2.10',
    });
    t.equal(elsewhere.statusCode, 200, 'its owner logs in from another address');
  },
);
