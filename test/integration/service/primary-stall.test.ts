import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import t, { type Test } from 'tap';
import { DEFAULT_BUDGETS } from '../../../src/adapters/config/budget-config.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { createDatabasePool } from '../../../src/adapters/postgres/database.ts';
import { composeServices } from '../../../src/compose.ts';
import { insertAccessFixture, policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { disposablePrimary } from '../../helpers/disposable-primary.ts';
import { freePort, startHaproxy } from '../../helpers/haproxy.ts';
import { request } from '../../helpers/scale-out.ts';

// Issue 31 §3: a slow or stalled primary must not take live API processes out of the load
// balancer, and what can be answered must keep being answered. One API process on a primary of
// its own, behind real HAProxy checking /api/live as docs/scaling.md configures it:
//
// 1. The primary slow: `events` locked (ACCESS EXCLUSIVE, as a long ALTER, REINDEX or VACUUM FULL
//    holds it). A page the answer cache holds keeps answering 200 with the same body and tag, and
//    304 to its tag: its check reads only the version tables (page-cache.ts). A page not cached
//    waits for the lock and answers 503 QUERY_TIMEOUT at the read budget. The process stays UP.
// 2. The primary frozen (postmaster and backends SIGSTOPped): nothing that needs the database can
//    answer, the answer cache included (its check is a round trip), and the process does not
//    pretend otherwise: such a request waits, and is answered once the primary resumes. /api/live
//    answers and the process stays UP; /api/health reports the stall (503, the database did not
//    answer within its deadline) instead of hanging.
//
// 3. The primary stopped: reads answer the process's own 503 DATABASE_UNAVAILABLE, not HAProxy's
//    "no server available", since the process stays in.
//
// No durations are compared: the test waits for states (bounded by its timeout) and checks facts.

t.test('a slow, frozen or stopped primary: live processes stay in, cached pages answer', async (t) => {
  const primary = await disposablePrimary(t);
  const setup = await createDatabasePool(primary.url, { maximumPoolSize: 1 });
  const owner = await postgresUserStore(setup).upsert({
    email: 'owner@example.org',
    passwordHash: 'not-a-hash',
    role: 'user',
    trustLevel: 1,
  });
  await insertAccessFixture({ name: 'stall', url: primary.url, pool: setup }, owner.id);
  await setup.end();

  const config = testConfig({
    quotasFile: policyFile(t, unlimitedAnonymousReads),
    budgets: { ...DEFAULT_BUDGETS, readStatementTimeoutMs: 1_000, readRequestBudgetMs: 3_000 },
  });
  const services = await composeServices(config, primary.url, { http: true, workers: false });
  t.teardown(() => services.close());
  const app = services.http as FastifyInstance;
  // HAProxy's checks as the process sees them arrive.
  let checks = 0;
  app.addHook('onRequest', async (request) => {
    if (request.url === '/api/live' && request.headers['x-test-client'] === undefined) checks += 1;
  });
  const port = await freePort();
  await app.listen({ port, host: '127.0.0.1' });
  const haproxy = await startHaproxy(t, [{ name: 'api1', port }]);
  const get = (path: string, headers: Record<string, string> = {}) =>
    request(`${haproxy.url}${path}`, { headers: { 'x-test-client': '1', ...headers }, timeoutMs: 120_000 });
  /** After HAProxy has checked the process `count` more times: still UP (never two failures in a row). */
  const stillUp = async (t: Test, when: string, count = 6) => {
    const target = checks + count;
    for (let wait = 0; wait < 600 && checks < target; wait += 1)
      await new Promise((resolve) => setTimeout(resolve, 50));
    t.ok(checks >= target, `${when}: HAProxy checked ${count} more times`);
    t.equal((await haproxy.status()).api1, 'UP', `${when}: HAProxy keeps the process UP`);
  };

  const cachedPath = '/api/v1/events?limit=5';
  const first = await get(cachedPath);
  t.equal(first.status, 200, 'a page');
  const cached = await get(cachedPath);
  t.equal(cached.body, first.body, 'asked again: the same answer, now from the answer cache');
  // fetch asks for a compressed answer each time, so its tag names the same bytes each time.
  const etag = (await fetch(`${haproxy.url}${cachedPath}`)).headers.get('etag') ?? '';
  t.ok(etag, 'with its tag');

  t.test('the primary slow: events locked', async (t) => {
    const locker = new pg.Client({ connectionString: primary.url });
    await locker.connect();
    t.teardown(() => locker.end());
    await locker.query('begin');
    await locker.query('lock table events in access exclusive mode');

    const again = await get(cachedPath);
    t.equal(again.status, 200, 'the cached page answers');
    t.equal(again.body, first.body, 'the same answer');
    // As a browser revalidates (fetch would add `Cache-Control: no-cache` to a conditional
    // request, which asks for a fresh read, not the stored answer).
    const revalidated = await fetch(`${haproxy.url}${cachedPath}`, {
      headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' },
    });
    t.equal(revalidated.status, 304, 'its tag revalidates: 304');
    const live = await get('/api/live');
    t.equal(live.status, 200, '/api/live answers');
    const uncached = await get('/api/v1/events?limit=7');
    t.equal(uncached.status, 503, 'a page not cached waits for the lock up to the read budget');
    t.match(JSON.parse(uncached.body), { code: 'QUERY_TIMEOUT' });
    await stillUp(t, 'events locked');

    await locker.query('rollback');
    t.equal((await get('/api/v1/events?limit=7')).status, 200, 'the lock gone, that page answers');
  });

  t.test('the primary frozen', async (t) => {
    primary.pause();
    t.teardown(() => primary.resume());
    const waiting = get(cachedPath);

    for (let check = 0; check < 3; check += 1) {
      const live = await get('/api/live');
      t.equal(live.status, 200, `/api/live answers (${check + 1})`);
    }
    for (const path of ['/', '/explore/app.js', '/api/openapi.json']) {
      const page = await get(path, { accept: 'text/html' });
      t.equal(page.status, 200, `${path} needs no database and answers ${page.error ?? ''}`);
    }
    const health = await get('/api/health');
    t.equal(health.status, 503, '/api/health reports the stall instead of hanging');
    t.match(JSON.parse(health.body), {
      database: { status: 'error', message: /did not answer within/ },
    });
    await stillUp(t, 'primary frozen');
    // The cached page's check is a round trip the frozen primary does not answer: the read is cut
    // at its request budget, not left hanging.
    const cut = await waiting;
    t.equal(cut.status, 503, `the cached page waits no longer than the read budget ${cut.error ?? ''}`);
    t.match(JSON.parse(cut.body), { code: 'QUERY_TIMEOUT' });

    primary.resume();
    const answered = await get(cachedPath);
    t.equal(answered.status, 200, `answered once the primary resumes ${answered.error ?? ''}`);
    t.equal(answered.body, first.body);
    let healthy = 0;
    for (let attempt = 0; attempt < 100 && healthy !== 200; attempt += 1) {
      healthy = (await get('/api/health')).status;
      if (healthy !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.equal(healthy, 200, '/api/health is ok again');
    await stillUp(t, 'primary back', 2);
  });

  t.test('the primary stopped', async (t) => {
    await primary.stop();
    const page = await get(cachedPath);
    t.equal(page.status, 503, 'a read answers 503');
    t.match(
      JSON.parse(page.body),
      { code: 'DATABASE_UNAVAILABLE' },
      "the process's own error body, not the balancer's: the process is still in",
    );
    t.equal((await get('/api/live')).status, 200, '/api/live answers');
    await stillUp(t, 'primary stopped');
    await primary.start();
    t.equal((await get(cachedPath)).status, 200, 'started again, the page answers');
  });
});
