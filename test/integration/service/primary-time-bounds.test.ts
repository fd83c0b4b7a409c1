import type { FastifyInstance } from 'fastify';
import t from 'tap';
import { DEFAULT_BUDGETS } from '../../../src/adapters/config/budget-config.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { createDatabasePool } from '../../../src/adapters/postgres/database.ts';
import { scryptPasswordHasher } from '../../../src/adapters/security/scrypt-password-hasher.ts';
import { composeServices } from '../../../src/compose.ts';
import { insertAccessFixture, PASSWORD, policyFile, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { disposablePrimary } from '../../helpers/disposable-primary.ts';

// Issue 31 §1 on the primary: a primary that stops answering (postmaster and backends SIGSTOPped,
// as a frozen host or a network black hole looks) answers no statement_timeout either, so only the
// client-side bounds of its pools (primary-bounds.ts) end a request's wait. With small budgets and
// margin: a logged-in write and a collection read, both on the HTTP routes' pool, answer 503
// DATABASE_UNAVAILABLE once their bound passes, instead of hanging; resumed, the same requests
// answer as before (the pools replace the connections they gave up on).
//
// No durations are compared: each request either answers or is reported as still waiting after a
// deadline far beyond its bound.

const STILL_WAITING = 'still waiting';

t.test(
  'a frozen primary: a write and a collection read answer 503, then normally once resumed',
  async (t) => {
    const primary = await disposablePrimary(t);
    const setup = await createDatabasePool(primary.url, { maximumPoolSize: 1 });
    const users = postgresUserStore(setup);
    const user = await users.upsert({
      email: 'user@example.org',
      passwordHash: await scryptPasswordHasher({ N: 1024 }).hash(PASSWORD),
      role: 'user',
      trustLevel: 2,
    });
    await insertAccessFixture({ name: 'bounds', url: primary.url, pool: setup }, user.id);
    await setup.end();

    const config = testConfig({
      sessionSecret: TEST_SESSION_SECRET,
      quotasFile: policyFile(t),
      // The HTTP routes' bound is 500 + 500 ms; the collection read's own budget far beyond it.
      budgets: {
        ...DEFAULT_BUDGETS,
        collectionsStatementTimeoutMs: 500,
        databaseTimeoutMarginMs: 500,
        collectionsRequestBudgetMs: 60_000,
      },
    });
    const services = await composeServices(config, primary.url, { http: true, workers: false });
    t.teardown(() => services.close());
    const app = services.http as FastifyInstance;
    const login = await app.inject({
      method: 'POST',
      url: '/api/users/login',
      payload: { email: 'user@example.org', password: PASSWORD },
    });
    t.equal(login.statusCode, 200, 'logged in');
    const authorization = `Bearer ${login.json().token as string}`;
    let slugs = 0;
    const write = () =>
      app.inject({
        method: 'POST',
        url: '/api/catalogs',
        headers: { authorization },
        payload: { slug: `bounded-${(slugs += 1)}`, title: 'Bounded', isPublic: false },
      });
    const read = () => app.inject({ method: 'GET', url: '/api/catalogs', headers: { authorization } });
    /** The response, or STILL_WAITING if it has not come 20 s after the request. */
    const answered = async (response: ReturnType<typeof read>) => {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<typeof STILL_WAITING>((resolve) => {
        timer = setTimeout(() => resolve(STILL_WAITING), 20_000);
      });
      try {
        return await Promise.race([response, deadline]);
      } finally {
        clearTimeout(timer);
      }
    };

    t.equal((await write()).statusCode, 201, 'up: the write answers');
    t.equal((await read()).statusCode, 200, 'up: the read answers');

    primary.pause();
    t.teardown(() => primary.resume());
    for (const [name, send] of [
      ['the collection read (GET /api/catalogs)', read],
      ['the write (POST /api/catalogs)', write],
      ['the read again', read],
    ] as const) {
      const response = await answered(send());
      if (response === STILL_WAITING) {
        t.fail(`frozen: ${name} is still waiting`);
        continue;
      }
      t.equal(response.statusCode, 503, `frozen: ${name} answers 503 ${response.body.slice(0, 200)}`);
      t.match(response.json(), { error: 'Service Unavailable', code: 'DATABASE_UNAVAILABLE' }, name);
    }

    primary.resume();
    const written = await write();
    t.equal(written.statusCode, 201, `resumed: the write answers ${written.body.slice(0, 200)}`);
    const listed = await read();
    t.equal(listed.statusCode, 200, 'resumed: the read answers');
    t.ok(
      (listed.json().docs as Array<{ slug: string }>).some((catalog) => catalog.slug === `bounded-${slugs}`),
      'and lists what was written after the resume',
    );
  },
);
