import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { SCRAPERS_WITHOUT_RUNNER } from '../../../src/domain/site/health.ts';
import { testApp } from '../../helpers/app.ts';
import { switchScrapers } from '../scrapers/scraper-fixtures.ts';

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

t.test('healthy service: 200 and every check ok, in the spec shape', async (t) => {
  const { app } = await testApp(t);
  const response = await app.inject({ method: 'GET', url: '/api/health' });
  t.equal(response.statusCode, 200);
  const body = response.json();
  t.same(body.database, { status: 'ok' });
  t.same(body.migrations, { status: 'ok' });
  t.equal(body.postgis.status, 'ok');
  t.match(body.postgis.version, /^3\.\d+/);
  t.same(body.environment, { status: 'ok' });
  t.notOk('runner' in body, 'no runner field without SCRAPER_RUNNER_URL');
});

t.test(
  'scrapers switched on without SCRAPER_RUNNER_URL: an environment error, 503 (issue 28 §8)',
  async (t) => {
    const { app, db } = await testApp(t);
    await switchScrapers(db.pool, true);
    const response = await app.inject({ method: 'GET', url: '/api/health' });
    t.equal(response.statusCode, 503);
    t.same(response.json().environment, { status: 'error', conflicts: [SCRAPERS_WITHOUT_RUNNER] });
    await switchScrapers(db.pool, false);
    t.equal(
      (await app.inject({ method: 'GET', url: '/api/health' })).statusCode,
      200,
      'switched off again: ok',
    );
  },
);

t.test('a reachable runner is ok, an unreachable one degraded, and both answer 200', async (t) => {
  const runner = createServer((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ status: 'ok', active_runs: 2, timestamp: new Date().toISOString() }));
  });
  const runnerUrl = await listen(runner);
  t.teardown(() => runner.close());
  const key = 'k'.repeat(32);

  const up = await testApp(t, { config: { scraperRunnerUrl: runnerUrl, scraperApiKey: key } });
  const okResponse = await up.app.inject({ method: 'GET', url: '/api/health' });
  t.equal(okResponse.statusCode, 200);
  t.same(okResponse.json().runner, { status: 'ok', url: runnerUrl, activeRuns: 2 });

  const closed = createServer();
  const closedUrl = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
  const down = await testApp(t, { config: { scraperRunnerUrl: closedUrl, scraperApiKey: key } });
  const degraded = await down.app.inject({ method: 'GET', url: '/api/health' });
  t.equal(degraded.statusCode, 200);
  t.equal(degraded.json().runner.status, 'degraded');
  t.match(degraded.json().runner.message, /unreachable/);
});

t.test('a database without PostGIS is a critical error (503)', async (t) => {
  const { app, db } = await testApp(t);
  await db.pool.query(sql.unsafe`drop extension postgis cascade`);
  const response = await app.inject({ method: 'GET', url: '/api/health' });
  t.equal(response.statusCode, 503);
  t.equal(response.json().postgis.status, 'not found');
});

t.test('an unapplied migration is named in migrations.pending', async (t) => {
  const { app, db } = await testApp(t);
  await db.pool.query(sql.unsafe`delete from chronomap_migrations where name = '0001_foundation.sql'`);
  const response = await app.inject({ method: 'GET', url: '/api/health' });
  t.equal(response.statusCode, 200, 'pending migrations are a warning');
  t.same(response.json().migrations, { status: 'pending', pending: ['0001_foundation.sql'] });
});
