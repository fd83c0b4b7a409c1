import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import t, { type Test } from 'tap';
import { createDatabasePool } from '../../../src/adapters/postgres/database.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../../src/adapters/security/scrypt-password-hasher.ts';
import { composeServices } from '../../../src/compose.ts';
import { insertAccessFixture, PASSWORD, policyFile, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { disposablePrimary } from '../../helpers/disposable-primary.ts';

// Issue 31 §4: the database really gone while a whole API process runs on it: the embedded
// cluster stopped (`pg_ctl stop`: its Unix socket file gone, every connection dropped), and the
// same cluster reached over TCP with the port closed (connections refused, those held reset). Every kind of route
// answers 503: the JSON ones with the spec's error body and code DATABASE_UNAVAILABLE, the server
// pages with a 503 page saying so, /api/health with its report (database: error), never a 500;
// /api/live answers 200 all along. Started again, the same routes answer as before the stop: the
// pools reconnect by themselves.

type Call = {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  /** Who calls: nobody, the user's Bearer token, or a page session cookie (user or admin). */
  as?: 'token' | 'user-cookie' | 'admin-cookie';
  /** A JSON body, or a form (sent url-encoded with its CSRF token and cookie). */
  json?: Record<string, unknown> | (() => Record<string, unknown>);
  form?: { page: string; fields: Record<string, string> };
  /** What it answers with the database up. */
  up: number;
  kind: 'json' | 'html' | 'health';
};

let probes = 0;
const BOUNDS = encodeURIComponent('{"north":60,"south":40,"east":20,"west":-5}');

const CALLS: Call[] = [
  { name: 'v1 page', method: 'GET', url: '/api/v1/events?limit=5', up: 200, kind: 'json' },
  { name: 'v1 map', method: 'GET', url: `/api/v1/events/geo?zoom=3&bounds=${BOUNDS}`, up: 200, kind: 'json' },
  { name: 'v1 stats', method: 'GET', url: '/api/v1/events/stats?groupBy=dataset', up: 200, kind: 'json' },
  { name: 'vector tile', method: 'GET', url: '/api/v1/tiles/0/0/0.mvt', up: 200, kind: 'json' },
  { name: 'OGC collections', method: 'GET', url: '/ogc/collections', up: 200, kind: 'json' },
  { name: 'internal read', method: 'GET', url: '/api/catalogs', up: 200, kind: 'json' },
  { name: 'token: me', method: 'GET', url: '/api/users/me', as: 'token', up: 200, kind: 'json' },
  { name: 'token: quotas', method: 'GET', url: '/api/quotas', as: 'token', up: 200, kind: 'json' },
  {
    name: 'token: write',
    method: 'POST',
    url: '/api/catalogs',
    as: 'token',
    // A new slug each time, so the write succeeds again after the restart.
    json: () => ({ slug: `outage-probe-${(probes += 1)}`, title: 'Probe', isPublic: false }),
    up: 201,
    kind: 'json',
  },
  {
    name: 'API login',
    method: 'POST',
    url: '/api/users/login',
    json: { email: 'user@example.org', password: PASSWORD },
    up: 200,
    kind: 'json',
  },
  {
    name: 'login form',
    method: 'POST',
    url: '/account/login',
    form: { page: '/account/login', fields: { email: 'user@example.org', password: PASSWORD } },
    up: 303,
    kind: 'html',
  },
  { name: 'account page', method: 'GET', url: '/account', as: 'user-cookie', up: 200, kind: 'html' },
  { name: 'imports page', method: 'GET', url: '/account/imports', as: 'user-cookie', up: 200, kind: 'html' },
  { name: 'admin page', method: 'GET', url: '/dashboard', as: 'admin-cookie', up: 200, kind: 'html' },
  {
    name: 'admin catalogs',
    method: 'GET',
    url: '/dashboard/catalogs',
    as: 'admin-cookie',
    up: 200,
    kind: 'html',
  },
  { name: 'health', method: 'GET', url: '/api/health', up: 200, kind: 'health' },
];

t.test('the database gone: 503 on every kind of route, and normal answers once it is back', async (t) => {
  const primary = await disposablePrimary(t);
  const pool = await createDatabasePool(primary.url, { maximumPoolSize: 1 });
  const hasher = scryptPasswordHasher({ N: 1024 });
  const users = postgresUserStore(pool);
  const user = await users.upsert({
    email: 'user@example.org',
    passwordHash: await hasher.hash(PASSWORD),
    role: 'user',
    trustLevel: 2,
  });
  await users.upsert({
    email: 'admin@example.org',
    passwordHash: await hasher.hash(PASSWORD),
    role: 'admin',
    trustLevel: 5,
  });
  await insertAccessFixture({ name: 'outage', url: primary.url, pool }, user.id);
  await pool.end();

  t.test('the embedded cluster stopped: its socket file gone', async (t) => {
    await outageRoundTrip(t, {
      url: primary.url,
      stop: () => primary.stop(),
      start: () => primary.start(),
    });
  });

  t.test('over TCP, the port closed: connections refused, those held reset', async (t) => {
    const relay = await tcpRelay(t, path.join(primary.cluster.socketDir, '.s.PGSQL.5432'));
    const url = new URL(primary.url);
    url.host = `127.0.0.1:${relay.port}`;
    await outageRoundTrip(t, { url: url.toString(), stop: relay.close, start: relay.open });
  });
});

/**
 * A whole API process on `url`; callers log in and fetch forms; every call answers as it should;
 * `stop()`; every call answers 503 (and /api/live 200); `start()`; every call answers as before.
 */
async function outageRoundTrip(
  t: Test,
  outage: { url: string; stop(): Promise<void>; start(): Promise<void> },
): Promise<void> {
  const config = testConfig({ sessionSecret: TEST_SESSION_SECRET, quotasFile: policyFile(t) });
  const services = await composeServices(config, outage.url, { http: true, workers: false });
  t.teardown(() => services.close());
  const app = services.http as FastifyInstance;

  // Everything a caller holds from before the stop: tokens, session cookies, forms' CSRF tokens.
  const login = async (email: string) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/users/login',
      payload: { email, password: PASSWORD },
    });
    t.equal(response.statusCode, 200, `${email} logs in`);
    return response.json().token as string;
  };
  const held = {
    token: await login('user@example.org'),
    'user-cookie': await login('user@example.org'),
    'admin-cookie': await login('admin@example.org'),
  };
  const forms = new Map<string, { cookie: string; csrf: string }>();
  for (const call of CALLS) {
    if (!call.form) continue;
    const page = await app.inject({ method: 'GET', url: call.form.page });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const cookie = String(page.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    t.ok(csrf && cookie, `${call.form.page} hands out a form`);
    forms.set(call.name, { cookie, csrf });
  }

  const send = (call: Call): Promise<LightMyRequestResponse> => {
    const headers: Record<string, string> = {};
    if (call.as === 'token') headers.authorization = `Bearer ${held.token}`;
    if (call.as === 'user-cookie' || call.as === 'admin-cookie')
      headers.cookie = `payload-token=${held[call.as]}`;
    if (call.form) {
      const form = forms.get(call.name) as { cookie: string; csrf: string };
      headers.cookie = form.cookie;
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const body = new URLSearchParams({ ...call.form.fields, _csrf: form.csrf }).toString();
      return app.inject({ method: call.method, url: call.url, headers, payload: body });
    }
    return app.inject({
      method: call.method,
      url: call.url,
      headers,
      ...(call.json ? { payload: typeof call.json === 'function' ? call.json() : call.json } : {}),
    });
  };
  const answersNormally = async (when: string) => {
    for (const call of CALLS) {
      const response = await send(call);
      t.equal(response.statusCode, call.up, `${when}: ${call.name} ${response.body.slice(0, 300)}`);
    }
  };

  await answersNormally('up');

  await outage.stop();
  for (const call of CALLS) {
    const response = await send(call);
    const what = `${call.name} (${call.method} ${call.url}): ${response.body.slice(0, 300)}`;
    t.equal(response.statusCode, 503, what);
    t.equal(response.headers['retry-after'], '5', `${call.name}: Retry-After`);
    if (call.kind === 'json') {
      t.match(response.json(), { error: 'Service Unavailable', code: 'DATABASE_UNAVAILABLE' }, what);
    } else if (call.kind === 'html') {
      t.match(response.headers['content-type'], /^text\/html/, `${call.name}: a page`);
      t.match(response.body, /The database is unavailable/, `${call.name}: says why`);
    } else {
      t.match(
        response.json(),
        { database: { status: 'error', message: /^the database cannot be reached/ } },
        `${call.name}: reports the database`,
      );
      t.notMatch(response.body, /PGSQL|127\.0\.0\.1|\/tmp\//, `${call.name}: names no address or socket`);
    }
  }
  const live = await app.inject({ method: 'GET', url: '/api/live' });
  t.equal(live.statusCode, 200, 'the liveness check asks no database: the process is up');

  await outage.start();
  await answersNormally('back');
}

/**
 * A TCP port on loopback relayed to the cluster's Unix socket, as a database server on another
 * host is reached. `close()` stops listening and resets every relayed connection (the port then
 * refuses); `open()` listens on the same port again.
 */
async function tcpRelay(t: Test, socketPath: string) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = async () => {
    const listening = createServer((inbound) => {
      const outbound = connect(socketPath);
      outbound.on('error', () => inbound.destroy());
      inbound.on('error', () => outbound.destroy());
      sockets.add(inbound);
      inbound.on('close', () => {
        sockets.delete(inbound);
        outbound.destroy();
      });
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => listening.listen(port, '127.0.0.1', resolve));
    port = (listening.address() as AddressInfo).port;
    server = listening;
  };
  const close = async () => {
    const closing = new Promise<void>((resolve) => server?.close(() => resolve()));
    // An RST to the API process's side of each held connection (a TCP socket: the other side, a
    // Unix socket, is closed with it).
    for (const socket of sockets) socket.resetAndDestroy();
    await closing;
  };
  await open();
  t.teardown(close);
  return { port, open, close };
}
