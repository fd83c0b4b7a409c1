import fc from 'fast-check';
import t from 'tap';
import { accountsApp, insertAccessFixture, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import {
  FUZZ_CLASSES,
  type FuzzClass,
  isScrapersWithoutRunner,
  prototypeSnapshot,
  requestArbitrary,
  routesOf,
  send,
} from '../../helpers/fuzz.ts';

// The HTTP fuzzer of issue 16, in the test command: FUZZ_RUNS seeded requests (FUZZ_SEED) over
// every route of /api/openapi.json, anonymous and logged in. Fails on any 5xx and on
// Object.prototype changing; a request that never gets an answer fails it by tap's timeout.
// Issue 30 §8: the logged-in callers' sessions stay alive throughout (logout and refresh-token,
// which end the session they are called with, are fuzzed anonymously only; the sessions are
// checked at the end), and every operation of the document is requested at least once.
// bench/fuzz/run.sh runs it longer and prints requests per second and the classes covered; it also
// sets FUZZ_MAX_MS, failing on an answer slower than that: a figure of the machine, so the test
// command, which a loaded machine runs too, asserts no time.

const RUNS = Number(process.env.FUZZ_RUNS ?? 1_500);
const SEED = Number(process.env.FUZZ_SEED ?? 1616);
const MAX_MS = process.env.FUZZ_MAX_MS ? Number(process.env.FUZZ_MAX_MS) : Infinity;

t.test('fuzzing every route of the OpenAPI document', async (t) => {
  const { app, db, createUser, login } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  // A user made first takes id 1, which the edge numbers ('1', '+1') name: the admin's
  // DELETE /api/users/1 then deletes that user, not the fuzzer's own (whose session must live on).
  await createUser();
  const owner = await createUser({ trustLevel: 5 });
  const admin = await createUser({ role: 'admin' });
  await insertAccessFixture(db, owner.id);
  const tokens = { anonymous: null, user: await login(owner), admin: await login(admin) };
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  const routes = routesOf(document);
  // Logging out or refreshing would end the fuzzer's own session (and silently fuzz the rest of the
  // run anonymously): those two are sent without one. Everything else is fair game for every caller.
  const endsSession = (operation: string) => /\/api\/users\/(logout|refresh-token)$/.test(operation);
  t.ok(
    routes.filter((route) => endsSession(`${route.method} ${route.path}`)).length >= 2,
    'logout and refresh-token are in the document',
  );
  const requested = new Set<string>();
  t.ok(routes.length > 40, `${routes.length} operations in the OpenAPI document`);

  const before = prototypeSnapshot();
  const perClass = new Map<FuzzClass, number>();
  const statuses = new Map<number, number>();
  let slowest = 0;
  const started = performance.now();
  await fc.assert(
    fc.asyncProperty(
      requestArbitrary(routes),
      fc.constantFrom('anonymous', 'user', 'admin'),
      async (request, caller) => {
        const token = endsSession(request.operation) ? null : tokens[caller as keyof typeof tokens];
        const outcome = await send(app, request, token);
        requested.add(request.operation);
        perClass.set(request.fuzzClass, (perClass.get(request.fuzzClass) ?? 0) + 1);
        statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
        slowest = Math.max(slowest, outcome.ms);
        const polluted =
          prototypeSnapshot() !== before || ({} as Record<string, unknown>).polluted !== undefined;
        if ((outcome.status >= 500 && !isScrapersWithoutRunner(outcome)) || outcome.ms > MAX_MS || polluted) {
          throw new Error(
            `${caller} ${request.method} ${request.url.slice(0, 300)} (${request.fuzzClass}) -> ${outcome.status} in ${Math.round(outcome.ms)} ms${polluted ? ', Object.prototype changed' : ''}`,
          );
        }
      },
    ),
    { seed: SEED, numRuns: RUNS, endOnFailure: true },
  );
  const seconds = (performance.now() - started) / 1000;

  t.same([...perClass.keys()].sort(), [...FUZZ_CLASSES].sort(), 'every class of input was sent');
  t.same(
    routes.map((route) => `${route.method} ${route.path}`).filter((operation) => !requested.has(operation)),
    [],
    `every one of the ${routes.length} operations was requested`,
  );
  for (const caller of ['user', 'admin'] as const) {
    const me = await app.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { authorization: `Bearer ${tokens[caller]}` },
    });
    t.equal(
      me.json().user?.id,
      (caller === 'user' ? owner : admin).id,
      `the ${caller}'s session is still alive`,
    );
  }
  t.equal(prototypeSnapshot(), before, 'Object.prototype untouched');
  t.comment(
    `fuzz: ${RUNS} requests (seed ${SEED}) in ${seconds.toFixed(1)} s = ${(RUNS / seconds).toFixed(0)} requests/s; ` +
      `slowest ${Math.round(slowest)} ms; classes ${[...perClass].map(([c, n]) => `${c}: ${n}`).join(', ')}; ` +
      `statuses ${[...statuses]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s}: ${n}`)
        .join(', ')}`,
  );
  // The fuzzer's admin may have switched scrapers on (health's designed 503 without a runner).
  await app.inject({
    method: 'PATCH',
    url: '/api/feature-flags',
    headers: { authorization: `Bearer ${tokens.admin}` },
    payload: { enableScrapers: false },
  });
  t.equal((await app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200, 'still healthy');
});
