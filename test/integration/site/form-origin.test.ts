import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import t from 'tap';
import { PASSWORD, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../../src/adapters/security/scrypt-password-hasher.ts';

// Issue 30 §7: form posts check where they come from (OWASP, beside the CSRF token). A post whose
// Origin (or, without one, Referer) is another site, or `Origin: null`, is a 403 page that says so,
// even with a valid token; the service's own origin is accepted; a post with neither header is
// judged by its token alone. The origin is PUBLIC_BASE_URL's when set, else the Host reached.

type Headers = Record<string, string>;

/** Loads a form page (cookie and token), then posts the form with `headers`. */
async function post(app: FastifyInstance, page: string, fields: Record<string, string>, headers: Headers) {
  const form = await app.inject({ method: 'GET', url: page });
  const token = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1];
  if (!token) throw new Error(`no CSRF token on ${page}: ${form.statusCode}`);
  const cookie = form.cookies.map((found) => `${found.name}=${found.value}`).join('; ');
  return app.inject({
    method: 'POST',
    url: page,
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams({ _csrf: token, ...fields }).toString(),
  });
}

async function setUp(t: Test, publicBaseUrl?: string) {
  const { app, db } = await testApp(t, {
    config: { sessionSecret: TEST_SESSION_SECRET, ...(publicBaseUrl ? { publicBaseUrl } : {}) },
  });
  const email = `admin-${process.pid}@example.org`;
  await postgresUserStore(db.pool).upsert({
    email,
    passwordHash: await scryptPasswordHasher({ N: 1024 }).hash(PASSWORD),
    role: 'admin',
    trustLevel: 5,
  });
  const login = (headers: Headers) => post(app, '/dashboard/login', { email, password: PASSWORD }, headers);
  return { app, login };
}

t.test('without PUBLIC_BASE_URL: the Host reached is our origin', async (t) => {
  const { app, login } = await setUp(t);
  for (const [name, headers] of Object.entries<Headers>({
    'Origin of another site': { origin: 'https://evil.example' },
    'Origin of another port': { origin: 'http://localhost:8080' },
    'Origin: null': { origin: 'null' },
    'Referer of another site (no Origin)': { referer: 'https://evil.example/forms/attack.html' },
    'a malformed Origin': { origin: 'not an origin' },
  })) {
    const refused = await login(headers);
    t.equal(refused.statusCode, 403, `${name}: refused`);
    t.match(refused.body, /This form was sent from another site/, `${name}: the page says why`);
    t.notOk(
      refused.cookies.some((cookie) => cookie.name === 'payload-token' && cookie.value !== ''),
      `${name}: no session`,
    );
  }
  const evil = await login({ origin: 'https://evil.example' });
  t.match(evil.body, /The post came from https:\/\/evil\.example/);

  for (const [name, headers] of Object.entries<Headers>({
    'our Origin': { origin: 'http://localhost' },
    'our Origin with the default port': { origin: 'http://localhost:80' },
    'our Referer (no Origin)': { referer: 'http://localhost/dashboard/login' },
    'neither header (the token decides)': {},
  })) {
    const accepted = await login(headers);
    t.equal(accepted.statusCode, 303, `${name}: accepted`);
    t.ok(accepted.cookies.some((cookie) => cookie.name === 'payload-token' && cookie.value !== ''));
  }

  // The account pages too (registration), before their token is looked at.
  const register = await post(
    app,
    '/account/register',
    { email: 'new@example.org', password: 'a long enough password 1' },
    { origin: 'https://evil.example' },
  );
  t.equal(register.statusCode, 403);
  t.match(register.body, /This form was sent from another site/);
});

t.test('with PUBLIC_BASE_URL: its origin, whatever the Host', async (t) => {
  const { login } = await setUp(t, 'https://events.example.org/chronomap');
  t.equal((await login({ origin: 'https://events.example.org' })).statusCode, 303, 'the configured origin');
  t.equal(
    (await login({ referer: 'https://events.example.org/chronomap/dashboard/login' })).statusCode,
    303,
    'a Referer on it',
  );
  for (const origin of ['http://localhost', 'http://events.example.org', 'https://attacker.example']) {
    const refused = await login({ origin, host: 'attacker.example' });
    t.equal(refused.statusCode, 403, `${origin}: not the configured origin`);
  }
});
