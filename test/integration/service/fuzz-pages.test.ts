import fc from 'fast-check';
import t from 'tap';
import { registeredRoutes } from '../../../src/adapters/http/route-registry.ts';
import { PASSWORD } from '../../helpers/accounts.ts';
import { prototypeSnapshot } from '../../helpers/fuzz.ts';
import {
  type Browser,
  browserOf,
  formFieldsOf,
  PAGE_BODIES,
  PAGE_TOKENS,
  pagePlanArbitrary,
  pageRequest,
  pageRoutesOf,
  routeKey,
} from '../../helpers/fuzz-pages.ts';
import { matrixFixture } from './route-authorization-fixture.ts';

// The page fuzzer of issue 30 §8, beside the API's (fuzz-http.test.ts): PAGE_FUZZ_RUNS seeded
// requests (PAGE_FUZZ_SEED) over every registered route outside /api and /ogc (the account pages,
// the import wizard, the scraper pages, the dashboard, the login and register forms, the Explore
// page and its assets), read from Fastify's route registry, so a new page is fuzzed without a list
// to edit. Callers are an anonymous browser, a user's and an admin's, logged in through the real
// login form (cookies); their posts carry a valid CSRF token and our Origin, so the hostile form
// reaches the handler, except the draws that leave the token out, send a wrong one or name another
// origin. Fails on any 5xx and on Object.prototype changing; at the end every page route was
// requested and both sessions are still alive (the logout posts are fuzzed anonymously).

const RUNS = Number(process.env.PAGE_FUZZ_RUNS ?? 1_000);
const SEED = Number(process.env.PAGE_FUZZ_SEED ?? 3008);

t.test('fuzzing every server-rendered page and form', async (t) => {
  const fx = await matrixFixture(t);
  await fx.app.ready();
  const app = fx.app;
  const routes = pageRoutesOf(registeredRoutes(app));
  t.ok(routes.filter((route) => route.method === 'POST').length > 30, `${routes.length} page routes`);

  const browsers: Record<'anonymous' | 'user' | 'admin', Browser> = {
    anonymous: await browserOf(app, null),
    user: await browserOf(app, { email: fx.users.owner.email, password: PASSWORD }),
    admin: await browserOf(app, { email: fx.users.admin.email, password: PASSWORD }),
  };
  // An existing record for the segment before a path parameter, so some requests go past the lookup.
  // Users: the owner only (an admin's form on their own account could take their admin rights).
  const fixtures: Record<string, number> = {
    catalogs: fx.catalog,
    datasets: fx.dataset,
    jobs: fx.job,
    'scheduled-imports': fx.schedule,
    repos: fx.repo,
    scrapers: fx.scraper,
    runs: fx.run,
    users: fx.users.owner.id,
  };
  const fixtureId = (segment: string) => (segment in fixtures ? String(fixtures[segment]) : undefined);
  // The fields of every form the pages show (as the fixture's records fill them), for the posts.
  const fields = new Set<string>(['email', 'password', 'name', 'next']);
  for (const route of routes.filter((r) => r.method === 'GET' && !/\.[a-z]+$|\*/.test(r.url))) {
    for (const browser of [browsers.user, browsers.admin]) {
      const url = route.url.replace(/:[a-zA-Z]+/g, (_m, i: number) => {
        const before = route.url.slice(0, i).split('/').at(-2) ?? '';
        return fixtureId(before) ?? '1';
      });
      const page = await app.inject({ method: 'GET', url, headers: { cookie: browser.cookie } });
      for (const name of formFieldsOf(page.body)) if (name !== '_csrf') fields.add(name);
    }
  }
  t.ok(fields.size > 15, `${fields.size} form fields found on the pages`);

  // Logging out ends the session it is sent with: the logout posts go out anonymously.
  const endsSession = (url: string) => /\/logout$/.test(url);
  const requested = new Set<string>();
  const statuses = new Map<number, number>();
  const drawn = { body: new Set<string>(), token: new Set<string>() };
  const before = prototypeSnapshot();
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(
      pagePlanArbitrary(routes, [...fields].sort()),
      fc.constantFrom('anonymous', 'user', 'admin'),
      async (plan, drawnCaller) => {
        const caller = endsSession(plan.route.url) ? 'anonymous' : (drawnCaller as keyof typeof browsers);
        const request = pageRequest(plan, browsers[caller], fixtureId);
        const response = await app.inject({
          method: request.method,
          url: request.url,
          headers: request.headers,
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        requested.add(routeKey(plan.route));
        if (plan.route.method === 'POST') {
          drawn.body.add(plan.body);
          drawn.token.add(plan.token);
        }
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        const polluted =
          prototypeSnapshot() !== before || ({} as Record<string, unknown>).polluted !== undefined;
        if (response.statusCode >= 500 || polluted)
          throw new Error(
            `${caller} ${request.method} ${request.url.slice(0, 300)} (${plan.body}, token ${plan.token}) -> ` +
              `${response.statusCode}${polluted ? ', Object.prototype changed' : ''}: ${response.body.slice(0, 300)}`,
          );
      },
    ),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
  const seconds = (performance.now() - started) / 1000;

  t.same(
    routes.map(routeKey).filter((key) => !requested.has(key)),
    [],
    `every one of the ${routes.length} page routes was requested`,
  );
  t.same([...drawn.body].sort(), [...PAGE_BODIES].sort(), 'every kind of form body was posted');
  t.same([...drawn.token].sort(), [...new Set(PAGE_TOKENS)].sort(), 'with and without a good token');
  for (const [caller, page] of [
    ['user', '/account'],
    ['admin', '/dashboard'],
  ] as const) {
    const answer = await app.inject({
      method: 'GET',
      url: page,
      headers: { cookie: browsers[caller].cookie },
    });
    t.equal(answer.statusCode, 200, `the ${caller}'s session is still alive (${page})`);
  }
  t.equal(prototypeSnapshot(), before, 'Object.prototype untouched');

  // What the fuzzer found, kept as plain regressions: an id that is not one on the dashboard was a
  // NaN for the database (500), and a multipart form cut short was a 500 page, not the API's 400.
  const admin = browsers.admin;
  for (const url of [
    '/dashboard/datasets/abc',
    '/dashboard/catalogs/-1',
    `/dashboard/datasets/${'9'.repeat(30)}`,
  ]) {
    const shown = await app.inject({ method: 'GET', url, headers: { cookie: admin.cookie } });
    t.equal(shown.statusCode, 404, `GET ${url}: the 404 page`);
    const posted = await app.inject({
      method: 'POST',
      url: `${url}/delete`,
      headers: {
        cookie: admin.cookie,
        origin: 'http://localhost',
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ _csrf: admin.csrf }).toString(),
    });
    t.equal(posted.statusCode, 404, `POST ${url}/delete: the 404 page`);
  }
  const cut = await app.inject({
    method: 'POST',
    url: `/account/scrapers/scrapers/${fx.scraper}/webhook`,
    headers: {
      cookie: admin.cookie,
      origin: 'http://localhost',
      'content-type': 'multipart/form-data; boundary=FUZZ',
    },
    payload: `--FUZZ\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${admin.csrf}\r\n--FUZZ\r\nContent-Disposition: form-data; name="files"; filename="a.py"\r\n\r\nprint(1)\n`,
  });
  t.equal(cut.statusCode, 400, 'a multipart form cut short: 400, as in the API');
  // A login form with a 300 KB email made a rate-limit key over the index's row size (500).
  for (const area of ['/account', '/dashboard']) {
    const huge = await app.inject({
      method: 'POST',
      url: `${area}/login`,
      headers: { cookie: browsers.anonymous.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        _csrf: browsers.anonymous.csrf,
        email: 'x'.repeat(300_000),
        password: 'p',
      }).toString(),
    });
    t.equal(huge.statusCode, 400, `${area}/login with a huge email: 400, as the API's bounds`);
  }
  t.comment(
    `page fuzz: ${RUNS} requests (seed ${SEED}) in ${seconds.toFixed(1)} s over ${routes.length} routes; statuses ${[
      ...statuses,
    ]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ')}`,
  );
});
