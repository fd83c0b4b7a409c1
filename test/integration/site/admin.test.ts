import { pinnedClock } from '../../helpers/app.ts';
import type { FastifyInstance } from 'fastify';
import t from 'tap';
import { accountsApp, PASSWORD, type TestUser } from '../../helpers/accounts.ts';

// The dashboard through HTTP as a browser without JavaScript uses it: cookies, forms, redirects.

class Browser {
  readonly cookies = new Map<string, string>();
  readonly app: FastifyInstance;

  constructor(app: FastifyInstance) {
    this.app = app;
  }

  private header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
    const response = await this.app.inject({
      method,
      url,
      headers: {
        cookie: this.header(),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
    });
    for (const cookie of response.cookies) {
      if (cookie.value === '') this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return response;
  }

  get(url: string) {
    return this.request('GET', url);
  }

  /** Loads the page, takes the first form's CSRF token, posts the form. */
  async submit(pageUrl: string, action: string, fields: Record<string, string>) {
    const page = await this.get(pageUrl);
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
    if (!token) throw new Error(`no CSRF token on ${pageUrl}: ${page.statusCode} ${page.body.slice(0, 200)}`);
    return this.request('POST', action, { _csrf: token, ...fields });
  }

  async login(user: TestUser) {
    return this.submit('/dashboard/login', '/dashboard/login', { email: user.email, password: PASSWORD });
  }
}

const flashError = (location: string | undefined) =>
  new URLSearchParams(location?.split('?')[1] ?? '').get('error');

t.test('dashboard', async (t) => {
  const { app, createUser, login, as } = await accountsApp(t);
  const admin = await createUser({ role: 'admin', email: 'admin@example.org' });
  const alice = await createUser({ email: 'alice@example.org' });
  const aliceApi = as(await login(alice));
  const secret = (
    await aliceApi('POST', '/api/catalogs', {
      slug: 'alice-secret',
      title: 'Alice <secret>',
      isPublic: false,
    })
  ).json().doc.id;

  t.test('pages need an admin login', async (t) => {
    const browser = new Browser(app);
    for (const url of [
      '/dashboard',
      '/dashboard/users',
      '/dashboard/settings',
      '/dashboard/catalogs',
      `/dashboard/catalogs/${secret}`,
    ]) {
      const response = await browser.get(url);
      t.equal(response.statusCode, 303, url);
      t.equal(response.headers.location, '/dashboard/login');
    }
    const login = await browser.get('/dashboard/login');
    t.equal(login.statusCode, 200);
    t.match(login.headers['content-type'], /text\/html/);
    t.match(login.body, /<form method="post" action="\/dashboard\/login"/);
  });

  t.test('a non-admin cannot get in, even with a valid session', async (t) => {
    const browser = new Browser(app);
    const refused = await browser.login(alice);
    t.equal(refused.statusCode, 403);
    t.match(refused.body, /not an admin/);
    t.notOk(browser.cookies.has('payload-token'), 'no session cookie handed out');

    const withToken = new Browser(app);
    withToken.cookies.set('payload-token', await login(alice));
    for (const url of ['/dashboard', `/dashboard/catalogs/${secret}`, '/dashboard/users']) {
      const response = await withToken.get(url);
      t.equal(response.statusCode, 403, url);
      t.notMatch(response.body, /Alice &lt;secret&gt;/, 'nothing private is shown');
    }
  });

  t.test('wrong password', async (t) => {
    const browser = new Browser(app);
    const response = await browser.submit('/dashboard/login', '/dashboard/login', {
      email: admin.email,
      password: 'nope',
    });
    t.equal(response.statusCode, 401);
    t.match(response.body, /email or password is incorrect/);
  });

  t.test('forms without a valid CSRF token are refused', async (t) => {
    const browser = new Browser(app);
    t.equal((await browser.login(admin)).statusCode, 303);
    t.ok(browser.cookies.has('payload-token'));
    const before = (await as(null)('GET', '/api/feature-flags')).json();
    for (const token of [undefined, '', 'forged', 'A'.repeat(43)]) {
      const response = await browser.request('POST', '/dashboard/settings', {
        ...(token === undefined ? {} : { _csrf: token }),
        enableScrapers: 'on',
      });
      t.equal(response.statusCode, 403, `token ${String(token)}`);
      t.match(response.body, /form has expired/);
    }
    const otherBrowser = new Browser(app);
    await otherBrowser.login(admin);
    const foreignToken =
      /name="_csrf" value="([^"]+)"/.exec((await otherBrowser.get('/dashboard/settings')).body)?.[1] ?? '';
    const crossed = await browser.request('POST', '/dashboard/settings', {
      _csrf: foreignToken,
      enableScrapers: 'on',
    });
    t.equal(crossed.statusCode, 403, "another browser's token does not fit this cookie");
    const noCookie = new Browser(app);
    noCookie.cookies.set('payload-token', browser.cookies.get('payload-token') ?? '');
    const cookieOnly = await noCookie.request('POST', '/dashboard/settings', {
      _csrf: foreignToken,
      enableScrapers: 'on',
    });
    t.equal(cookieOnly.statusCode, 403, 'a session cookie alone (a cross-site post) is not enough');
    t.same((await as(null)('GET', '/api/feature-flags')).json(), before, 'nothing changed');
    const loginForged = await new Browser(app).request('POST', '/dashboard/login', {
      email: admin.email,
      password: PASSWORD,
    });
    t.equal(loginForged.statusCode, 403, 'the login form is protected too');
  });

  t.test('settings, users, catalogs and datasets', async (t) => {
    const browser = new Browser(app);
    await browser.login(admin);
    const overview = await browser.get('/dashboard');
    t.equal(overview.statusCode, 200);
    t.match(overview.body, /Overview/);

    const saved = await browser.submit('/dashboard/settings', '/dashboard/settings', {
      enableScrapers: 'on',
      enableRegistration: 'on',
    });
    t.equal(saved.statusCode, 303);
    t.match(saved.headers.location, /^\/dashboard\/settings\?notice=/);
    t.same((await as(null)('GET', '/api/feature-flags')).json(), {
      enableScrapers: true,
      enableRegistration: true,
    });
    await browser.submit('/dashboard/settings', '/dashboard/settings', { enableRegistration: 'on' });
    t.equal(
      (await as(null)('GET', '/api/feature-flags')).json().enableScrapers,
      false,
      'an unchecked box switches off',
    );

    const users = await browser.get('/dashboard/users');
    t.match(users.body, /alice@example\.org/);
    t.match(users.body, /importJobsPerDay: <b>0<\/b>\/10/);
    const promoted = await browser.submit('/dashboard/users', `/dashboard/users/${alice.id}`, {
      role: 'user',
      trustLevel: '3',
    });
    t.equal(promoted.statusCode, 303);
    // A raise keeps alice's sessions and applies at once; a lowering ends them (issue 28 §1).
    t.equal(
      (await aliceApi('GET', '/api/users/me')).json().user?.trustLevel,
      3,
      "the raise applies in alice's session, without logging her out",
    );
    const demoted = await browser.submit('/dashboard/users', `/dashboard/users/${alice.id}`, {
      role: 'user',
      trustLevel: '2',
    });
    t.equal(demoted.statusCode, 303);
    t.equal(
      (await aliceApi('GET', '/api/users/me')).json().user,
      null,
      "the lowering ended alice's sessions",
    );
    t.equal((await as(await login(alice))('GET', '/api/users/me')).json().user.trustLevel, 2);
    const selfDemotion = await browser.submit('/dashboard/users', `/dashboard/users/${admin.id}`, {
      role: 'user',
      trustLevel: '1',
    });
    t.equal(flashError(selfDemotion.headers.location), 'An admin cannot change their own role');
    // Values no form sends (issue 30 §7): a 400 page naming the field, never a 500, nothing changed.
    for (const fields of [
      { role: 'user' },
      { role: 'user', trustLevel: '' },
      { role: 'user', trustLevel: 'NaN' },
      { role: 'user', trustLevel: '2.5' },
      { role: 'user', trustLevel: '9' },
      { role: 'root', trustLevel: '2' },
    ] as Record<string, string>[]) {
      const bad = await browser.submit('/dashboard/users', `/dashboard/users/${alice.id}`, fields);
      t.equal(bad.statusCode, 400, JSON.stringify(fields));
      t.match(bad.body, /trustLevel must be a whole number from 0 to 5|role must be admin or user/);
    }
    t.equal((await as(await login(alice))('GET', '/api/users/me')).json().user.trustLevel, 2, 'unchanged');

    const catalogs = await browser.get('/dashboard/catalogs');
    t.match(catalogs.body, /Alice &lt;secret&gt;/, 'admins see private catalogs; titles are escaped');
    t.notMatch(catalogs.body, /Alice <secret>/);
    const created = await browser.submit('/dashboard/catalogs', '/dashboard/catalogs', {
      title: 'Floods',
      slug: 'floods',
      description: '',
      isPublic: 'on',
    });
    t.equal(created.statusCode, 303);
    const catalogUrl = created.headers.location?.split('?')[0] ?? '';
    t.match(catalogUrl, /^\/dashboard\/catalogs\/\d+$/);
    const catalogId = Number(catalogUrl.split('/').pop());
    const bad = await browser.submit('/dashboard/catalogs', '/dashboard/catalogs', {
      title: 'Dup',
      slug: 'floods',
    });
    t.equal(flashError(bad.headers.location), 'A document with this value already exists');
    // The dashboard's form reads slugs like the API (isSlug): before, any length the database's
    // pattern check let through was stored.
    const long = await browser.submit('/dashboard/catalogs', '/dashboard/catalogs', {
      title: 'Long',
      slug: 'a'.repeat(129),
    });
    t.match(flashError(long.headers.location), /slug must be .* at most 128 characters/);
    t.notMatch(
      (await browser.get('/dashboard/catalogs')).body,
      /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/,
    );

    await browser.submit(catalogUrl, `/dashboard/catalogs/${catalogId}/datasets`, {
      title: 'Rivers',
      slug: 'rivers',
      isPublic: 'on',
    });
    const dataset = (await as(null)('GET', '/api/datasets?where[slug][equals]=rivers')).json().docs[0];
    t.match(
      dataset,
      { title: 'Rivers', isPublic: true, catalog: catalogId },
      'anonymous sees the public dataset',
    );
    await browser.submit(catalogUrl, `/dashboard/datasets/${dataset.id}/visibility`, { isPublic: 'off' });
    t.equal(
      (await as(null)('GET', '/api/datasets?where[slug][equals]=rivers')).json().totalDocs,
      0,
      'made private',
    );
    await browser.submit(`/dashboard/datasets/${dataset.id}`, `/dashboard/datasets/${dataset.id}`, {
      title: 'Rivers and lakes',
      slug: 'rivers',
      isPublic: 'on',
    });
    t.match((await as(null)('GET', `/api/datasets/${dataset.id}`)).json(), {
      title: 'Rivers and lakes',
      isPublic: true,
    });
    await browser.submit(catalogUrl, `/dashboard/catalogs/${catalogId}`, { title: 'Floods', slug: 'floods' });
    t.equal(
      (await as(null)('GET', `/api/catalogs/${catalogId}`)).statusCode,
      404,
      'the catalog is private now',
    );
    t.equal(
      (await as(null)('GET', `/api/datasets/${dataset.id}`)).statusCode,
      404,
      'and so is everything in it',
    );

    const out = await browser.submit('/dashboard', '/dashboard/logout', {});
    t.equal(out.statusCode, 303);
    t.equal((await browser.get('/dashboard')).statusCode, 303, 'logged out');
  });
});

t.test('the dashboard and /account log in through one handler, throttled alike', async (t) => {
  const { app, createUser } = await accountsApp(t, {
    clock: pinnedClock(),
    policy: (p) => {
      p.loginAttempts = {
        perIpAndEmail: { burst: { seconds: 86_400, limit: 3 } },
        perIp: { burst: { seconds: 86_400, limit: 100 } },
      };
    },
  });
  const admin = await createUser({ role: 'admin' });
  const guess = (area: 'dashboard' | 'account', password: string) =>
    new Browser(app).submit(`/${area}/login`, `/${area}/login`, { email: admin.email, password });
  t.equal((await guess('dashboard', 'wrong 1')).statusCode, 401);
  t.equal((await guess('account', 'wrong 2')).statusCode, 401);
  t.equal((await guess('dashboard', 'wrong 3')).statusCode, 401);
  for (const area of ['dashboard', 'account'] as const) {
    const throttled = await guess(area, PASSWORD);
    t.equal(throttled.statusCode, 429, `${area}: the attempts of both pages count together`);
    t.ok(Number(throttled.headers['retry-after']) > 0, `${area}: with Retry-After`);
    t.equal(throttled.headers['x-ratelimit-remaining'], '0', `${area}: and the API's X-RateLimit headers`);
    t.match(throttled.body, /Too many login attempts/);
  }
});

t.test('pages answer a refusal with the status the API gives it (one map)', async (t) => {
  const { app, createUser, login, as } = await accountsApp(t);
  const admin = await createUser({ role: 'admin' });
  const browser = new Browser(app);
  t.equal((await browser.login(admin)).statusCode, 303);
  const missing = '/dashboard/catalogs/987654';
  const page = await browser.get(missing);
  const api = await as(await login(admin))('GET', '/api/catalogs/987654');
  t.equal(api.statusCode, 404);
  t.equal(page.statusCode, 404, 'a missing catalog is 404 on the dashboard too, not 400');
  t.match(page.body, /Not found/);
});
