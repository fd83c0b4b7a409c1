import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { ingestApp, signIn, upload } from '../../fixtures/ingest/client.ts';

// Legal notices, the newsletter subscription against real loopback servers (one that hangs, one
// that redirects to a private address, one that accepts), and the admin preview's safe redirect.

async function setup(t: Test, allowPrivateAddresses = true) {
  const base = await ingestApp(
    t,
    { fetch: { maxBytes: 1024 * 1024, timeoutMs: 3000, allowPrivateAddresses } },
    false,
  );
  const admin = await signIn(base.app, base.db.pool, { role: 'admin' });
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, token: string | null, payload?: unknown) =>
    base.app.inject({
      method,
      url,
      headers: token ? { authorization: `Bearer ${token}` } : {},
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  return { ...base, admin, call };
}

async function server(t: Test, handle: http.RequestListener) {
  const s = http.createServer(handle);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    s.closeAllConnections();
    s.close();
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

t.test('legal notices: public to read, admins change them', async (t) => {
  const { user, admin, call } = await setup(t);
  t.same((await call('GET', '/api/legal-notices', null)).json(), {
    termsUrl: null,
    privacyUrl: null,
    registrationDisclaimer: null,
    contactEmail: null,
  });
  const change = { termsUrl: 'https://example.org/terms', contactEmail: 'legal@example.org' };
  t.equal((await call('PATCH', '/api/legal-notices', null, change)).statusCode, 401);
  t.equal((await call('PATCH', '/api/legal-notices', user.token, change)).statusCode, 403);
  const bad = await call('PATCH', '/api/legal-notices', admin.token, { privacyUrl: 'javascript:alert(1)' });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'INVALID_URL');
  t.equal((await call('PATCH', '/api/legal-notices', admin.token, change)).statusCode, 200);
  await call('PATCH', '/api/legal-notices', admin.token, { registrationDisclaimer: 'Be nice.' });
  t.same((await call('GET', '/api/legal-notices', null)).json(), {
    termsUrl: 'https://example.org/terms',
    privacyUrl: null,
    registrationDisclaimer: 'Be nice.',
    contactEmail: 'legal@example.org',
  });
});

t.test('newsletter: forwarded through the guard; clear codes when it cannot be', async (t) => {
  const { user, admin, call } = await setup(t);
  const subscribe = () => call('POST', '/api/newsletter/subscribe', null, { email: 'reader@example.org' });
  const none = await subscribe();
  t.equal(none.statusCode, 404);
  t.equal(none.json().code, 'NEWSLETTER_NOT_CONFIGURED');
  t.equal((await call('POST', '/api/newsletter/subscribe', null, { email: 'nope' })).statusCode, 400);

  const received: string[] = [];
  const accepting = await server(t, (request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(body);
      response.writeHead(204).end();
    });
  });
  const hits: string[] = [];
  const privateTarget = await server(t, (request, response) => {
    hits.push(request.url ?? '');
    response.writeHead(204).end();
  });
  const redirecting = await server(t, (_request, response) =>
    response.writeHead(307, { location: `${privateTarget}/internal` }).end(),
  );
  // Never answers; says when the subscription arrived and when its connection was closed.
  const hangingSaw: string[] = [];
  let hungUp = (_seen: string[]) => {};
  const closed = new Promise<string[]>((resolve) => (hungUp = resolve));
  const hanging = await server(t, (request) => {
    hangingSaw.push('request');
    request.socket.once('close', () => {
      hangingSaw.push('closed');
      hungUp(hangingSaw);
    });
  });

  const set = (serviceUrl: string | null, token = admin.token) =>
    call('PATCH', '/api/newsletter/settings', token, { serviceUrl });
  t.equal((await set(accepting, user.token)).statusCode, 403);
  t.equal((await call('GET', '/api/newsletter/settings', user.token)).statusCode, 403);
  t.equal((await set(accepting)).statusCode, 200);
  t.same((await call('GET', '/api/newsletter/settings', admin.token)).json(), {
    serviceUrl: `${accepting}/`,
  });
  const ok = await subscribe();
  t.equal(ok.statusCode, 200, ok.body);
  t.same(
    received.map((b) => JSON.parse(b)),
    [{ email: 'reader@example.org' }],
  );

  await set(redirecting);
  const redirected = await subscribe();
  t.equal(redirected.statusCode, 503);
  t.equal(redirected.json().code, 'NEWSLETTER_REDIRECT_REFUSED');
  t.equal(redirected.json().details, undefined, 'no internal details to an anonymous caller');
  t.same(hits, [], 'the redirect target was never contacted');

  await set(hanging);
  const hung = await subscribe();
  t.equal(hung.statusCode, 503);
  // The code is given only when the poster's own deadline aborted the request: a service that
  // gave up first (closed the connection) would be a different error.
  t.equal(hung.json().code, 'NEWSLETTER_TIMEOUT');
  t.same(await closed, ['request', 'closed'], 'the service dropped the connection the hanging one held open');
});

t.test('newsletter: a private address is refused by the guard', async (t) => {
  const { admin, call } = await setup(t, false);
  const target = await server(t, (_request, response) => response.writeHead(204).end());
  await call('PATCH', '/api/newsletter/settings', admin.token, { serviceUrl: target });
  const blocked = await call('POST', '/api/newsletter/subscribe', null, { email: 'reader@example.org' });
  t.equal(blocked.statusCode, 503);
  t.equal(blocked.json().code, 'SSRF_BLOCKED');
  // Nothing about the configured service reaches an anonymous caller (issue 30 §7).
  t.equal(blocked.json().details, undefined);
  t.notMatch(blocked.body, new RegExp(`127\\.0\\.0\\.1|localhost|${new URL(target).port}`));
});

t.test('preview: admins only, a local redirect focused on an event or dataset', async (t) => {
  const { app, db, catalogId, user, admin, call } = await setup(t);
  const uploaded = await upload(app, catalogId, {
    name: 'quakes.csv',
    content: 'time,latitude,longitude\n2026-01-01T00:00:00Z,52.5,13.4\n',
  });
  const datasetId = uploaded.json().doc.datasets[0] as number;
  t.equal((await call('GET', `/api/preview?dataset=${datasetId}`, null)).statusCode, 401);
  t.equal((await call('GET', `/api/preview?dataset=${datasetId}`, user.token)).statusCode, 403);
  const toDataset = await call('GET', `/api/preview?dataset=${datasetId}`, admin.token);
  t.equal(toDataset.statusCode, 302, toDataset.body);
  t.equal(toDataset.headers.location, '/?catalog=imports&datasets=quakes');

  const eventId = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into events (dataset_id, catalog_id, unique_id, data, location, event_timestamp)
    values (${datasetId}, ${catalogId}, 'e1', '{}'::jsonb, ST_SetSRID(ST_MakePoint(13.4, 52.5), 4326),
            timestamptz '2026-01-01T10:00:00Z') returning id`);
  const toEvent = await call(
    'GET',
    `/api/preview?event=${eventId}&path=${encodeURIComponent('/?zoom=3')}`,
    admin.token,
  );
  t.equal(toEvent.statusCode, 302, toEvent.body);
  t.equal(
    toEvent.headers.location,
    '/?zoom=12.00&lng=13.4000&lat=52.5000&startDate=2026-01-01&endDate=2026-01-01&catalog=imports&datasets=quakes',
  );
  t.equal((await call('GET', '/api/preview?event=999999', admin.token)).statusCode, 404);

  for (const path of [
    '//evil.example',
    '/\\evil.example',
    'javascript:alert(1)',
    'https://evil.example/',
    'data:text/html,x',
    '/\r\nSet-Cookie:x',
    '/\tx',
    'explore',
  ]) {
    const refused = await call('GET', `/api/preview?path=${encodeURIComponent(path)}`, admin.token);
    t.equal(refused.statusCode, 400, `refused: ${JSON.stringify(path)}`);
    t.equal(refused.json().code, 'UNSAFE_REDIRECT');
  }
});
