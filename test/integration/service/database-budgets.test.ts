import { request } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { DEFAULT_BUDGETS } from '../../../src/adapters/config/budget-config.ts';
import { accountsHttp } from '../../../src/adapters/http/accounts/account-hooks.ts';
import { collectionsHttp } from '../../../src/adapters/http/collections/collections-http.ts';
import { buildHttpApp } from '../../../src/adapters/http/app.ts';
import { readHttp } from '../../../src/adapters/http/read/read-http.ts';
import { createDatabasePool, type DatabasePool, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { composeAccounts, siteHttpOn } from '../../helpers/compose.ts';
import { policyFile, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { testApp, testConfig } from '../../helpers/app.ts';
import { testDatabase } from '../../helpers/database.ts';
import { runningStatements } from '../../helpers/running-statements.ts';

// Every statement has a budget (statement_timeout per pool), a request's statements stop when its
// client goes away, and a database that cannot be reached is a 503 with the error body.

const sleepRoute = (seconds: string) => `/test/sleep/${seconds}`;

t.test('a statement over the HTTP pool budget is a 503 QUERY_TIMEOUT', async (t) => {
  const { app, services } = await testApp(t, {
    config: { budgets: { ...DEFAULT_BUDGETS, collectionsStatementTimeoutMs: 300 } },
  });
  // The HTTP-only process's pool serves the routes: its budget applies.
  app.get('/test/sleep/:seconds', async (request) => {
    const { seconds } = request.params as { seconds: string };
    await services.pool.query(sql.unsafe`select pg_sleep(${Number(seconds)})`);
    return { slept: seconds };
  });
  const slow = await app.inject({ method: 'GET', url: sleepRoute('5') });
  t.equal(slow.statusCode, 503);
  t.equal(slow.json().code, 'QUERY_TIMEOUT');
  t.equal(slow.headers['retry-after'], '5');
  const quick = await app.inject({ method: 'GET', url: sleepRoute('0.01') });
  t.equal(quick.statusCode, 200, 'a statement within its budget answers');
});

t.test('the statements of a request whose client disconnects are cancelled', async (t) => {
  const { app, services, db } = await testApp(t);
  app.get('/test/sleep/:seconds', async (request) => {
    const { seconds } = request.params as { seconds: string };
    await services.pool.query(sql.unsafe`select pg_sleep(${Number(seconds)}), 'chronomap-sleep-probe'`);
    return { slept: seconds };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const { waitFor } = runningStatements(db.pool, 'chronomap-sleep-probe');

  // 8 s of sleep inside the 10 s default budget: only the cancel can end it within the 5 s we wait.
  const client = request({ host: '127.0.0.1', port, path: sleepRoute('8') });
  client.on('error', () => {});
  client.end();
  t.ok(await waitFor((n) => n > 0), 'the statement runs');
  client.destroy();
  t.ok(await waitFor((n) => n === 0), 'no backend is left running once the client is gone');
});

/**
 * A pool that reaches the test database through a relay listening on `where` (a TCP port on
 * loopback or a Unix socket path), and `stop`, which closes the relay and its sockets: the
 * database going away (existing connections drop; new ones are refused, or for a Unix socket find
 * no socket file, as when the embedded cluster stops).
 */
async function relayedPool(t: Test, where: { socketPath?: string }) {
  const db = await testDatabase(t);
  const target = new URL(db.url);
  const sockets = new Set<Socket>();
  const relay = createServer((inbound) => {
    const outbound = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  const relayUrl = new URL(db.url);
  if (where.socketPath) {
    const socketPath = where.socketPath;
    await new Promise<void>((resolve) => relay.listen(socketPath, resolve));
    // As the embedded cluster's URL names its socket: the directory percent-encoded as the host (pg
    // adds .s.PGSQL.<port> itself).
    relayUrl.host = encodeURIComponent(path.dirname(socketPath));
    relayUrl.port = target.port;
  } else {
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    relayUrl.hostname = '127.0.0.1';
    relayUrl.port = String((relay.address() as AddressInfo).port);
  }
  const pool = await createDatabasePool(relayUrl.toString(), { maximumPoolSize: 2 });
  pool.on('error', () => {});
  t.teardown(() => pool.end().catch(() => {}));
  await pool.query(sql.unsafe`select 1`);
  const stop = () =>
    new Promise<void>((resolve) => {
      relay.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
  return { pool, stop };
}

t.test('a database that cannot be reached: 503 with the error body on every kind of route', async (t) => {
  const { pool, stop } = await relayedPool(t, {});
  await stop();
  await answersUnavailable(t, pool);
});

t.test('the embedded database stopped (its Unix socket gone): 503, not 500', async (t) => {
  // The embedded cluster listens on a Unix socket only; stopped, its socket file is gone and every
  // connect fails with ENOENT (measured: 141 answers of 500 in two outages).
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-socket-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = new URL((await testDatabase(t)).url);
  const { pool, stop } = await relayedPool(t, { socketPath: path.join(dir, `.s.PGSQL.${db.port || 5432}`) });
  await stop();
  await answersUnavailable(t, pool);
});

/** Every kind of route answered on `pool`, a database that cannot be reached: 503 DATABASE_UNAVAILABLE. */
async function answersUnavailable(t: Test, dead: DatabasePool): Promise<void> {
  const config = testConfig({ sessionSecret: TEST_SESSION_SECRET, quotasFile: policyFile(t) });
  const accounts = composeAccounts(config, dead);
  const app = await buildHttpApp(
    {
      version: 'test',
      features: [
        siteHttpOn(dead),
        readHttp({ readApi: { events: postgresEventReader(dead, { genericPlanPool: dead }) } }),
        accountsHttp(accounts),
        collectionsHttp(accounts.collections),
      ],
    },
    { logLevel: 'silent', bodyLimitBytes: 1024 * 1024 },
  );
  t.teardown(() => app.close().catch(() => {}));
  const calls: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/events'],
    [
      'GET',
      `/api/v1/events/geo?zoom=3&bounds=${encodeURIComponent('{"north":60,"south":40,"east":20,"west":-5}')}`,
    ],
    ['GET', '/api/catalogs'],
    ['GET', '/api/events/1'],
    ['POST', '/api/users/login', { email: 'a@example.org', password: 'whatever-long-enough' }],
  ];
  for (const [method, url, payload] of calls) {
    const response = await app.inject({
      method: method as 'GET' | 'POST',
      url,
      ...(payload ? { payload: payload as Record<string, unknown> } : {}),
    });
    t.equal(response.statusCode, 503, `${method} ${url}: ${response.body.slice(0, 200)}`);
    t.equal(response.json().error, 'Service Unavailable', url);
    t.equal(response.json().code, 'DATABASE_UNAVAILABLE', url);
  }
  const live = await app.inject({ method: 'GET', url: '/api/live' });
  t.equal(live.statusCode, 200, 'the liveness check asks no database: the process is up');
}
