import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import type { Test } from 'tap';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp, policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { listenOnLoopback } from '../../helpers/http-client.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// CORS, compression and HTTP caching of the public read API over a real socket
// (src/adapters/http/public-web.ts, http-caching.ts; docs/api-v1.md).

const ORIGIN = 'https://maps.example.org';

async function service(t: Test, corsOrigins: string[] | null = null) {
  const { app, db } = await testApp(t, {
    config: { quotasFile: policyFile(t, unlimitedAnonymousReads), corsOrigins },
  });
  const fixture = await loadReadFixture(db.pool);
  return { client: await listenOnLoopback(app), db, fixture };
}

t.test('CORS: the public API is readable from any origin, internal routes are not', async (t) => {
  const { client } = await service(t);

  const preflight = await client.request('/api/v1/events', {
    method: 'OPTIONS',
    headers: { origin: ORIGIN, 'access-control-request-method': 'GET' },
  });
  t.equal(preflight.status, 204, 'preflight answered');
  t.equal(preflight.headers['access-control-allow-origin'], '*');
  t.match(preflight.headers['access-control-allow-methods'], /GET/);
  t.match(preflight.headers['access-control-allow-headers'], /If-None-Match/);
  t.notOk(preflight.headers['access-control-allow-credentials'], 'no credentials');

  const get = await client.request('/api/v1/events?limit=1', { headers: { origin: ORIGIN } });
  t.equal(get.status, 200);
  t.equal(get.headers['access-control-allow-origin'], '*');
  const exposed = String(get.headers['access-control-expose-headers']);
  for (const name of ['ETag', 'X-RateLimit-Remaining', 'Retry-After', 'RateLimit', 'RateLimit-Policy'])
    t.match(exposed, name, `${name} exposed`);

  for (const path of ['/api/health', '/api/users/me', '/api/ingest-files']) {
    const internal = await client.request(path, { headers: { origin: ORIGIN } });
    t.notOk(internal.headers['access-control-allow-origin'], `${path}: no ACAO`);
    t.notOk(internal.headers['access-control-allow-credentials'], `${path}: no credentials`);
    const internalPreflight = await client.request(path, {
      method: 'OPTIONS',
      headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
    });
    t.equal(internalPreflight.status, 404, `${path}: preflight not answered`);
    t.notOk(internalPreflight.headers['access-control-allow-origin']);
    t.match(JSON.parse(internalPreflight.body.toString()), { error: 'Not Found' }, 'the error body');
  }
});

t.test('CORS_ORIGINS narrows the origins', async (t) => {
  const { client } = await service(t, [ORIGIN]);
  const allowed = await client.request('/api/v1/events?limit=1', { headers: { origin: ORIGIN } });
  t.equal(allowed.headers['access-control-allow-origin'], ORIGIN);
  t.match(String(allowed.headers.vary), /Origin/);
  const other = await client.request('/api/v1/events?limit=1', {
    headers: { origin: 'https://evil.example' },
  });
  t.equal(other.status, 200, 'the answer itself is not refused (CORS is for browsers)');
  t.notOk(other.headers['access-control-allow-origin'], 'but a browser may not read it');
});

t.test('compression: gzip and br above a kilobyte, by Accept-Encoding', async (t) => {
  const { client } = await service(t);
  const plain = await client.request('/api/v1/events?limit=200');
  t.notOk(plain.headers['content-encoding'], 'identity without Accept-Encoding');
  const gzip = await client.request('/api/v1/events?limit=200', { headers: { 'accept-encoding': 'gzip' } });
  t.equal(gzip.headers['content-encoding'], 'gzip');
  t.match(String(gzip.headers.vary), /accept-encoding/i);
  t.ok(gzip.body.length < plain.body.length / 3, `gzip ${gzip.body.length} of ${plain.body.length} bytes`);
  t.same(gunzipSync(gzip.body), plain.body, 'the same bytes once inflated');
  const br = await client.request('/api/v1/events?limit=200', {
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  });
  t.equal(br.headers['content-encoding'], 'br');
  t.same(brotliDecompressSync(br.body), plain.body);

  const openapi = await client.request('/api/openapi.json', { headers: { 'accept-encoding': 'gzip' } });
  t.equal(openapi.headers['content-encoding'], 'gzip', 'the OpenAPI document too');

  const small = await client.request('/api/v1/sources/stats', { headers: { 'accept-encoding': 'gzip' } });
  t.ok(small.body.length < 1024);
  t.notOk(small.headers['content-encoding'], 'a body under the threshold is sent as it is');
});

t.test('HTTP caching: ETag from the data versions, 304, Cache-Control and Vary', async (t) => {
  const { client, db, fixture } = await service(t);
  const path = '/api/v1/events?datasets=protests&limit=5';
  const first = await client.request(path);
  const etag = String(first.headers.etag);
  t.match(etag, /^"[A-Za-z0-9_-]+"$/, 'a strong ETag');
  t.equal(first.headers['cache-control'], 'public, max-age=0, must-revalidate');
  t.match(String(first.headers.vary), /Authorization, Cookie/);

  const again = await client.request(path, { headers: { 'if-none-match': etag } });
  t.equal(again.status, 304, 'If-None-Match with the current tag: 304');
  t.equal(again.body.length, 0, 'no body');
  t.equal(again.headers.etag, etag);

  const gzipTag = (await client.request(path, { headers: { 'accept-encoding': 'gzip' } })).headers.etag;
  t.not(gzipTag, etag, 'another content coding, another strong tag');

  // A write elsewhere (another catalog's dataset) leaves the tag; a write to the view changes it.
  const insert = (dataset: string, catalog: string, id: string) =>
    db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      values (${fixture.datasetIds[dataset] ?? 0}, ${fixture.catalogIds[catalog] ?? 0}, ${id}, 'new', '{}',
              st_setsrid(st_makepoint(13.4, 52.5), 4326), '2025-01-05T10:00:00Z')`);
  await insert('exhibitions', 'science', 'etag-elsewhere');
  const afterElsewhere = await client.request(path, { headers: { 'if-none-match': etag } });
  t.equal(afterElsewhere.status, 304, 'a write to another dataset: still 304');
  await insert('protests', 'news', 'etag-in-view');
  const afterWrite = await client.request(path, { headers: { 'if-none-match': etag } });
  t.equal(afterWrite.status, 200, 'a write to the dataset in view: a new answer');
  t.not(afterWrite.headers.etag, etag, 'with a new tag');

  // Every other /api/v1 answer gets a tag too (a hash of its body) and revalidates the same way.
  for (const other of ['/api/v1/events/stats?groupBy=dataset', '/api/v1/data-sources']) {
    const answer = await client.request(other);
    t.ok(answer.headers.etag, `${other}: ETag`);
    const revalidated = await client.request(other, {
      headers: { 'if-none-match': String(answer.headers.etag) },
    });
    t.equal(revalidated.status, 304, `${other}: 304`);
  }
  // Internal routes are not given any of it.
  const health = await client.request('/api/health');
  t.notOk(health.headers.etag);
});

t.test(
  'Cache-Control: private for a signed-in caller, whose answers may show private catalogs',
  async (t) => {
    const accounts = await accountsApp(t, { policy: unlimitedAnonymousReads });
    const token = await accounts.login(await accounts.createUser());
    const signedIn = await accounts.as(token)('GET', '/api/v1/events?limit=1');
    t.equal(signedIn.statusCode, 200);
    t.equal(signedIn.headers['cache-control'], 'private, max-age=0, must-revalidate');
    t.match(String(signedIn.headers.vary), /Authorization, Cookie/);
    const anonymous = await accounts.as(null)('GET', '/api/v1/events?limit=1');
    t.equal(anonymous.headers['cache-control'], 'public, max-age=0, must-revalidate');
    t.not(signedIn.headers.etag, anonymous.headers.etag, 'callers never share a tag');
  },
);
