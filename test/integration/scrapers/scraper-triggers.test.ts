import { type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { buildHttpApp } from '../../../src/adapters/http/app.ts';
import { scrapersHttp } from '../../../src/adapters/http/scrapers/scrapers-http.ts';
import { createDatabasePool, row, sql } from '../../../src/adapters/postgres/database.ts';
import { requestRepoSync } from '../../../src/application/scrapers/request-repo-sync.ts';
import { scheduleDueScrapers } from '../../../src/application/scrapers/schedule-due-scrapers.ts';
import type { ScraperDeps } from '../../../src/application/scrapers/scraper-deps.ts';
import { setScraperWebhook } from '../../../src/application/scrapers/set-scraper-webhook.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { triggerScraperWebhook } from '../../../src/application/scrapers/trigger-scraper-webhook.ts';
import type { Actor } from '../../../src/domain/scrapers/access.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { startScraperWorkers } from '../../../src/adapters/jobs/scraper-jobs.ts';
import { httpRunnerClient } from '../../../src/adapters/runner/runner-client.ts';
import { executeScraperRun } from '../../../src/application/scrapers/execute-scraper-run.ts';
import { createScraperRepo } from '../../../src/application/scrapers/create-scraper-repo.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { accountsApp, policyFile } from '../../helpers/accounts.ts';
import { testApp, testConfig } from '../../helpers/app.ts';
import { testDatabase } from '../../helpers/database.ts';
import {
  createUser,
  openBoss,
  pythonRepo,
  RUNNER_KEY,
  scraperDeps,
  switchScrapers,
  syncedScraper,
  WRITES_TWO_ROWS,
} from './scraper-fixtures.ts';

/**
 * The HTTP app with the scraper routes and a test-only `authenticate`: the header `x-test-user`
 * names a user of this test. Production takes the user from the accounts plugin's request.user.
 */
async function appWithTestUsers(deps: ScraperDeps, users: Map<string, Actor>): Promise<FastifyInstance> {
  return buildHttpApp(
    {
      version: 'test',
      features: [
        scrapersHttp({
          triggers: {
            triggerRun: (actor, id) => triggerScraperRun(deps, actor, id),
            triggerWebhook: (token) => triggerScraperWebhook(deps, token),
            requestSync: (actor, id) => requestRepoSync(deps, actor, id),
          },
          authenticate: (request) => users.get(String(request.headers['x-test-user'])) ?? null,
        }),
      ],
    },
    { logLevel: 'silent', bodyLimitBytes: 1024 * 1024 },
  );
}

/**
 * The spec's rate-limit error for a spent daily runs quota of `limit`: exactly this body and these
 * headers, whichever route (run or webhook) was refused.
 */
function assertDailyRunsRefusal(t: Test, spent: LightMyRequestResponse, limit: number): void {
  t.equal(spent.statusCode, 429);
  const limited = spent.json();
  t.same(limited, {
    success: false,
    error: 'Rate limit exceeded',
    message: `the daily limit of ${limit} scraper runs is reached`,
    code: 'SCRAPER_RUNS_QUOTA_EXCEEDED',
    limitType: 'daily',
    retryAfter: limited.retryAfter,
  });
  t.match(limited.retryAfter, /T00:00:00\.000Z$/, 'daily quotas reset at midnight UTC');
  t.equal(spent.headers['x-ratelimit-limit'], String(limit));
  t.equal(spent.headers['x-ratelimit-remaining'], '0');
  t.equal(spent.headers['x-ratelimit-reset'], limited.retryAfter);
  t.match(spent.headers['retry-after'], /^[1-9]\d*$/, 'whole seconds, at least one');
  t.ok(Number(spent.headers['retry-after']) <= 24 * 60 * 60, 'no later than the next midnight');
}

t.test('anonymous callers are not authenticated: 401, in the spec error body', async (t) => {
  const { app, db } = await testApp(t);
  await switchScrapers(db.pool, true);
  for (const url of ['/api/scrapers/1/run', '/api/scraper-repos/1/sync']) {
    const response = await app.inject({ method: 'POST', url });
    t.equal(response.statusCode, 401, url);
    t.same(response.json(), {
      error: 'Unauthorized',
      message: 'log in or send a bearer token',
      code: 'UNAUTHORIZED',
    });
  }
  // Authentication comes before validation: an anonymous caller learns nothing from a malformed id
  // (a logged-in one gets the 400: ownership.test.ts).
  const invalid = await app.inject({ method: 'POST', url: '/api/scrapers/abc/run' });
  t.equal(invalid.statusCode, 401);
  t.equal(invalid.json().code, 'UNAUTHORIZED');
});

t.test('a real login authenticates the scraper routes: bearer token and payload-token cookie', async (t) => {
  const { app, db, createUser: createAccount, login } = await accountsApp(t);
  await switchScrapers(db.pool, true);
  const deps = composeScraperDeps(testConfig(), db.pool, await openBoss(t, db));
  const account = await createAccount({ trustLevel: 3 });
  const owner = { id: account.id, role: account.role, trustLevel: account.trustLevel };
  const repo = await createScraperRepo(deps, owner, {
    name: 'Events',
    slug: 'events',
    sourceType: 'upload',
    code: pythonRepo(WRITES_TWO_ROWS),
  });
  t.equal((await syncScraperRepo(deps, repo.id)).status, 'synced');
  const [scraper] = await deps.scrapers.listByRepo(repo.id);
  if (!scraper) throw new Error('no scraper after sync');
  const token = await login(account);
  const strangerToken = await login(await createAccount({ trustLevel: 4 }));

  const byBearer = await app.inject({
    method: 'POST',
    url: `/api/scrapers/${scraper.id}/run`,
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(byBearer.statusCode, 200);
  t.match(await deps.runs.get(byBearer.json().run.id), { status: 'queued', triggeredByUser: account.id });

  const bySession = await app.inject({
    method: 'POST',
    url: `/api/scraper-repos/${repo.id}/sync`,
    cookies: { 'payload-token': token },
  });
  t.equal(bySession.statusCode, 200, 'the session cookie of a browser login');
  t.match(bySession.json(), { message: 'sync queued', repo: repo.id, syncStatus: 'pending' });

  const stranger = await app.inject({
    method: 'POST',
    url: `/api/scrapers/${scraper.id}/run`,
    headers: { authorization: `Bearer ${strangerToken}` },
  });
  t.equal(stranger.statusCode, 404, 'a logged-in user who does not own the repo: as if it did not exist');
  for (const headers of [{ authorization: 'Bearer not-a-token' }, {}]) {
    const refused = await app.inject({ method: 'POST', url: `/api/scrapers/${scraper.id}/run`, headers });
    t.equal(refused.statusCode, 401);
  }
});

t.test(
  'scraper quotas are the accounts quotas: limits from the quotas file, usage in GET /api/quotas',
  async (t) => {
    // One repo and one run a day for trust level 3, in the quotas file of both the app and the deps.
    const oneOfEach: Parameters<typeof policyFile>[1] = (policy) => {
      policy.quotas.scraperRepos.levels[3] = 1;
      policy.quotas.scraperRunsPerDay.levels[3] = 1;
    };
    const { app, db, createUser: createAccount, login } = await accountsApp(t, { policy: oneOfEach });
    await switchScrapers(db.pool, true);
    const config = testConfig({ quotasFile: policyFile(t, oneOfEach) });
    const deps = composeScraperDeps(config, db.pool, await openBoss(t, db));
    const account = await createAccount({ trustLevel: 3 });
    const owner = { id: account.id, role: account.role, trustLevel: account.trustLevel };
    const input = (slug: string) => ({
      name: slug,
      slug,
      sourceType: 'upload',
      code: pythonRepo(WRITES_TWO_ROWS),
    });
    const repo = await createScraperRepo(deps, owner, input('one'));
    await t.rejects(createScraperRepo(deps, owner, input('two')), {
      kind: 'quota_exceeded',
      code: 'SCRAPER_REPOS_QUOTA_EXCEEDED',
    });
    t.equal((await syncScraperRepo(deps, repo.id)).status, 'synced');
    const [scraper] = await deps.scrapers.listByRepo(repo.id);
    if (!scraper) throw new Error('no scraper after sync');
    const token = await login(account);
    const run = (url: string) =>
      app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}` } });

    t.equal((await run(`/api/scrapers/${scraper.id}/run`)).statusCode, 200);
    await deps.quotas.take(owner.id, [{ quota: 'scraperRunsPerDay', amount: 1 }]); // the run starts
    const quotas = await app.inject({
      method: 'GET',
      url: '/api/quotas',
      headers: { authorization: `Bearer ${token}` },
    });
    t.match(quotas.json().quotas.scraperRunsPerDay, { used: 1, limit: 1, remaining: 0 });
    const spent = await run(`/api/scrapers/${scraper.id}/run`);
    t.equal(spent.statusCode, 429);
    t.equal(spent.json().message, 'the daily limit of 1 scraper runs is reached');
    await t.rejects(deps.quotas.take(owner.id, [{ quota: 'scraperRunsPerDay', amount: 1 }]), {
      code: 'QUOTA_EXCEEDED',
      limit: 1,
      used: 1,
    });
  },
);

t.test(
  'POST /api/webhooks/trigger/{token} is shared: a scraper token queues a run, others 404',
  async (t) => {
    const { app, db } = await testApp(t);
    await switchScrapers(db.pool, true);
    const deps = composeScraperDeps(testConfig(), db.pool, await openBoss(t, db));
    const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));
    const token = (await setScraperWebhook(deps, owner, scraper.id, true)).token ?? '';
    const trigger = (value: string) => app.inject({ method: 'POST', url: `/api/webhooks/trigger/${value}` });

    const queued = await trigger(token);
    t.equal(queued.statusCode, 200);
    const body = queued.json();
    t.match(body, {
      success: true,
      jobId: /^[0-9a-f-]{36}$/,
      run: { scraper: scraper.id, status: 'queued', triggeredBy: 'webhook', runId: /^[0-9a-f-]{36}$/ },
    });
    t.match(await deps.runs.get(body.run.id), { status: 'queued', triggeredBy: 'webhook' });

    for (const unknown of ['0'.repeat(64), 'not-a-token']) {
      const missing = await trigger(unknown);
      t.equal(missing.statusCode, 404, unknown);
      t.equal(missing.json().code, 'WEBHOOK_NOT_FOUND');
    }
    await switchScrapers(db.pool, false);
    const off = await trigger(token);
    t.equal(off.statusCode, 403, 'scrapers switched off');
    t.equal(off.json().code, 'SCRAPERS_DISABLED');
    await switchScrapers(db.pool, true);

    // Over the owner's daily runs (trust level 3: 10): the spec's rate-limit error, body and
    // headers, exactly as the run route and the request rate limit answer it; no run is queued.
    for (let used = 0; used < 10; used++)
      await deps.quotas.take(owner.id, [{ quota: 'scraperRunsPerDay', amount: 1 }]);
    const runsBefore = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Integer() })))`
      select count(*)::int as n from scraper_runs where scraper_id = ${scraper.id}`);
    assertDailyRunsRefusal(t, await trigger(token), 10);
    t.equal(
      await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Integer() })))`
        select count(*)::int as n from scraper_runs where scraper_id = ${scraper.id}`),
      runsBefore,
      'a refused webhook queues nothing',
    );

    await setScraperWebhook(deps, owner, scraper.id, false);
    t.equal((await trigger(token)).statusCode, 404, 'a disabled webhook');
  },
);

t.test('POST /api/scrapers/{id}/run and /api/scraper-repos/{id}/sync: 200, 403, 404, 429', async (t) => {
  // Strangers get the 404 of a missing scraper (the collection does the same); users without
  // scraper access (levels 0-2) the collection's 403.
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db);
  const { owner, repo, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));
  const users = new Map<string, Actor>([
    ['owner', owner],
    ['stranger', await createUser(db.pool, 4)],
    ['regular', await createUser(db.pool, 2)],
    ['admin', await createUser(db.pool, 1, 'admin')],
  ]);
  const app = await appWithTestUsers(deps, users);
  t.teardown(() => app.close());
  const post = (url: string, user: string) =>
    app.inject({ method: 'POST', url, headers: { 'x-test-user': user } });

  const ok = await post(`/api/scrapers/${scraper.id}/run`, 'owner');
  t.equal(ok.statusCode, 200);
  const body = ok.json();
  t.match(body, {
    message: 'run queued',
    jobId: /^[0-9a-f-]{36}$/,
    run: { scraper: scraper.id, status: 'queued', triggeredBy: 'manual', runId: /^[0-9a-f-]{36}$/ },
  });
  t.match(await deps.runs.get(body.run.id), { status: 'queued', triggeredByUser: owner.id });
  t.equal(
    (await post(`/api/scrapers/${scraper.id}/run`, 'admin')).statusCode,
    200,
    'admins may run any scraper',
  );
  const regular = await post(`/api/scrapers/${scraper.id}/run`, 'regular');
  t.equal(regular.statusCode, 403);
  t.equal(regular.json().code, 'TRUST_LEVEL_TOO_LOW');
  const notTheirs = await post(`/api/scrapers/${scraper.id}/run`, 'stranger');
  const missing = await post('/api/scrapers/987654/run', 'stranger');
  t.equal(notTheirs.statusCode, 404);
  t.equal(missing.statusCode, 404);
  t.equal(missing.json().code, 'SCRAPER_NOT_FOUND');
  t.same(
    { ...notTheirs.json(), message: null },
    { ...missing.json(), message: null },
    'the same body but for the id in the message',
  );

  // Trust level 3: 10 runs a day. The two runs above are queued, not run: they take no quota yet.
  for (let used = 0; used < 10; used++)
    await deps.quotas.take(owner.id, [{ quota: 'scraperRunsPerDay', amount: 1 }]);
  assertDailyRunsRefusal(t, await post(`/api/scrapers/${scraper.id}/run`, 'owner'), 10);

  const sync = await post(`/api/scraper-repos/${repo.id}/sync`, 'owner');
  t.equal(sync.statusCode, 200);
  t.match(sync.json(), { message: 'sync queued', repo: repo.id, syncStatus: 'pending' });
  t.equal((await deps.repos.get(repo.id))?.syncStatus, 'pending');
  t.equal((await post(`/api/scraper-repos/${repo.id}/sync`, 'admin')).statusCode, 200);
  t.equal((await post(`/api/scraper-repos/${repo.id}/sync`, 'stranger')).statusCode, 404);
  t.equal((await post(`/api/scraper-repos/${repo.id}/sync`, 'regular')).statusCode, 403);
  t.equal((await post('/api/scraper-repos/987654/sync', 'owner')).statusCode, 404);
});

t.test('webhooks: the token is shown once, stored hashed, and rotated by disable + enable', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db);
  const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));
  const stranger = await createUser(db.pool, 5);
  await t.rejects(setScraperWebhook(deps, stranger, scraper.id, true), {
    kind: 'forbidden',
    code: 'FORBIDDEN',
  });

  const enabled = await setScraperWebhook(deps, owner, scraper.id, true);
  const token = enabled.token ?? '';
  t.match(token, /^[0-9a-f]{64}$/);
  const stored = await db.pool.oneFirst(sql.type(row(Type.Object({ hash: Type.String() })))`
    select webhook_token_hash as hash from scrapers where id = ${scraper.id}`);
  t.not(stored, token, 'only a hash is stored');
  t.equal(stored, deps.tokens.hash(token));
  t.same(await setScraperWebhook(deps, owner, scraper.id, true), { webhookEnabled: true }, 'not shown again');

  const queued = await triggerScraperWebhook(deps, token);
  t.match(queued?.run, {
    scraperId: scraper.id,
    triggeredBy: 'webhook',
    triggeredByUser: null,
    status: 'queued',
  });
  t.equal(await triggerScraperWebhook(deps, deps.tokens.generate().token), null, 'a wrong token');
  t.equal(await triggerScraperWebhook(deps, 'not-a-token'), null);
  t.equal(await triggerScraperWebhook(deps, token.toUpperCase()), null);

  t.same(await setScraperWebhook(deps, owner, scraper.id, false), { webhookEnabled: false });
  t.equal(await triggerScraperWebhook(deps, token), null, 'a disabled webhook');
  const rotated = (await setScraperWebhook(deps, owner, scraper.id, true)).token ?? '';
  t.match(rotated, /^[0-9a-f]{64}$/);
  t.not(rotated, token);
  t.equal(await triggerScraperWebhook(deps, token), null, 'the old token is dead after re-enabling');
  t.ok(await triggerScraperWebhook(deps, rotated));
  const off = await scraperDeps(t, db, { enableScrapers: false });
  await t.rejects(triggerScraperWebhook(off, rotated), { kind: 'forbidden', code: 'SCRAPERS_DISABLED' });
});

t.test('two schedule managers at once: each due time runs exactly once, never while running', async (t) => {
  const db = await testDatabase(t);
  const first = await scraperDeps(t, db);
  // A second worker: its own connection pool and its own pg-boss.
  const secondPool = await createDatabasePool(db.url, { maximumPoolSize: 3 });
  t.teardown(() => secondPool.end());
  const second = await scraperDeps(t, { ...db, pool: secondPool });
  const manifest =
    'scrapers:\n' +
    '  - { name: Every minute, slug: minutely, entrypoint: main.py, schedule: "* * * * *" }\n' +
    '  - { name: Busy, slug: busy, entrypoint: main.py, schedule: "* * * * *" }\n' +
    '  - { name: Manual, slug: manual, entrypoint: main.py }\n';
  const { repo } = await syncedScraper(first, db.pool, pythonRepo(WRITES_TWO_ROWS, manifest));
  const bySlug = new Map((await first.scrapers.listByRepo(repo.id)).map((s) => [s.slug, s]));
  const minutely = bySlug.get('minutely')?.id ?? 0;
  const busy = bySlug.get('busy')?.id ?? 0;
  const start = new Date('2030-06-01T12:00:00Z');
  await db.pool.query(sql.unsafe`update scrapers set schedule_since = ${'2030-06-01T11:59:30Z'}`);
  await db.pool.query(sql.unsafe`update scrapers set last_run_status = 'running' where id = ${busy}`);

  const queuedBy: number[] = [];
  for (let minute = 0; minute < 5; minute++) {
    // Both managers wake a few seconds into the minute, and once more later in the same minute.
    for (const offset of [2, 40]) {
      const now = new Date(start.getTime() + minute * 60_000 + offset * 1000);
      const results = await Promise.all(
        [first, second].map((deps) => scheduleDueScrapers({ ...deps, clock: { now: () => now } })),
      );
      queuedBy.push(...results.map((result) => result.queued.length));
    }
    // The run finishes before the next minute (the execution job is not under test here).
    await db.pool.query(sql.unsafe`
      update scraper_runs set status = 'success', started_at = now(), finished_at = now() where status = 'queued'`);
  }
  const runs = await db.pool.any(sql.type(
    row(Type.Object({ scraper_id: Type.Number(), scheduled_for: Type.String() })),
  )`
    select scraper_id, scheduled_for from scraper_runs order by scheduled_for`);
  t.same(
    runs,
    [0, 1, 2, 3, 4].map((minute) => ({
      scraper_id: minutely,
      scheduled_for: new Date(start.getTime() + minute * 60_000).toISOString(),
    })),
    'one run per due time, none for the running or the unscheduled scraper',
  );
  t.equal(
    queuedBy.reduce((sum, n) => sum + n, 0),
    5,
    'and only the manager whose insert won queued its job',
  );
  const jobs = await db.pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
    select count(*)::int as count from pgboss.job where name = 'scraper-execution-job'`);
  t.equal(jobs, 5);

  const off = await scraperDeps(t, db, { enableScrapers: false });
  const later = new Date(start.getTime() + 10 * 60_000);
  t.same(
    await scheduleDueScrapers({ ...off, clock: { now: () => later } }),
    { queued: [] },
    'nothing while scrapers are off',
  );
});

t.test("a run queued by a request is sent to the runner with the request's X-Request-Id", async (t) => {
  // A stand-in runner that records the headers of each call and answers a finished run.
  const calls: Array<{ url: string; requestId: string | undefined }> = [];
  const runner = createServer((request, response) => {
    calls.push({ url: request.url ?? '', requestId: request.headers['x-request-id'] as string | undefined });
    request.resume();
    request.on('end', () =>
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'success', exit_code: 0, duration_ms: 5, stdout: '', stderr: '' })),
    );
  });
  await new Promise<void>((resolve) => runner.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => runner.close(() => resolve())));
  const runnerUrl = `http://127.0.0.1:${(runner.address() as AddressInfo).port}`;

  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db, { runner: httpRunnerClient(runnerUrl, RUNNER_KEY) });
  const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));
  const app = await appWithTestUsers(deps, new Map([['owner', owner]]));
  t.teardown(() => app.close());

  const queued = await app.inject({
    method: 'POST',
    url: `/api/scrapers/${scraper.id}/run`,
    headers: { 'x-test-user': 'owner', 'x-request-id': 'edge-run-42' },
  });
  t.equal(queued.statusCode, 200);
  t.equal(queued.headers['x-request-id'], 'edge-run-42');
  t.ok((await triggerScraperRun(deps, owner, scraper.id)).jobId, 'a run queued outside any request');

  await startScraperWorkers(deps.boss, {
    executeRun: (runId) => executeScraperRun(deps, runId),
    syncRepo: async () => {},
  });
  const deadline = Date.now() + 30_000;
  while (calls.filter((call) => call.url === '/run').length < 2 && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(
    calls.map((call) => [call.url, call.requestId ?? 'none']).sort(),
    [
      ['/run', 'edge-run-42'],
      ['/run', 'none'],
    ],
    "the request's id on its run's call to the runner; none on the run no request queued",
  );
});
