import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import type { Test } from 'tap';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import {
  accountsApp,
  insertAccessFixture,
  policyFile,
  unlimitedAnonymousReads,
} from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { listenOnLoopback } from '../../helpers/http-client.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// Materialised exports (application/read/export-events.ts, adapters/files/export-file-store.ts): an
// export is kept as a file once per data version; a repeated download reads it, with Content-Length,
// ranges and the data version as its ETag; a write makes a new version; viewers who may read
// different datasets never share a file; GDAL reads an export through /vsicurl/ (ranges).

const run = promisify(execFile);

async function setUp(t: Test) {
  const directory = t.testdir();
  const { app, db } = await testApp(t, {
    config: {
      quotasFile: policyFile(t, unlimitedAnonymousReads),
      exportCache: { directory, maxBytes: 64 * 1024 * 1024 },
    },
  });
  const fixture = await loadReadFixture(db.pool);
  const kept = () => readdirSync(directory).filter((name) => name.endsWith('.export'));
  // No file half written: an export's file is committed after the answer's last byte, so a test
  // that ends on a fresh download waits for it before its directory is removed.
  const settled = () => readdirSync(directory).every((name) => !name.startsWith('.part-'));
  return { app, db, fixture, kept, settled };
}

t.test('a HEAD writes the export once; GETs read the file, whole or by range', async (t) => {
  const { app, kept } = await setUp(t);
  const url = '/api/v1/events.csv?catalog=news';
  const fresh = await app.inject({ method: 'GET', url, headers: { 'x-no-compression': '1' } });
  t.equal(fresh.statusCode, 200);
  t.equal(fresh.headers['accept-ranges'], 'bytes', 'a fresh export says ranges are served');
  const bytes = fresh.rawPayload;

  const head = await app.inject({ method: 'HEAD', url });
  t.equal(head.statusCode, 200);
  t.equal(Number(head.headers['content-length']), bytes.length, 'HEAD: the size of the export');
  t.equal(head.headers.etag, fresh.headers.etag, 'the same data version, the same validator');
  t.equal(kept().length, 1, 'kept as one file');

  const whole = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'identity' } });
  t.equal(whole.statusCode, 200);
  t.equal(Number(whole.headers['content-length']), bytes.length);
  t.ok(whole.rawPayload.equals(bytes), 'the file holds the bytes of a fresh export');
  t.match(whole.headers['content-type'], /^text\/csv/);
  t.match(whole.headers['content-disposition'], /attachment; filename="chronomap-events.csv"/);

  const part = await app.inject({ method: 'GET', url, headers: { range: 'bytes=10-99' } });
  t.equal(part.statusCode, 206);
  t.equal(part.headers['content-range'], `bytes 10-99/${bytes.length}`);
  t.ok(part.rawPayload.equals(bytes.subarray(10, 100)), 'a range: exactly those bytes');
  t.notOk(part.headers['content-encoding'], 'a range is never compressed');

  const tail = await app.inject({ method: 'GET', url, headers: { range: 'bytes=-25' } });
  t.equal(tail.statusCode, 206);
  t.ok(tail.rawPayload.equals(bytes.subarray(bytes.length - 25)), 'a suffix range');

  const past = await app.inject({ method: 'GET', url, headers: { range: `bytes=${bytes.length + 5}-` } });
  t.equal(past.statusCode, 416);
  t.equal(past.headers['content-range'], `bytes */${bytes.length}`);
  t.match(past.json(), { error: 'Range Not Satisfiable' }, 'the error body of the spec');

  const unchanged = await app.inject({
    method: 'GET',
    url,
    headers: { 'if-none-match': String(whole.headers.etag) },
  });
  t.equal(unchanged.statusCode, 304, 'revalidation by the data version');
  t.equal(kept().length, 1, 'still one file: no export ran again');
});

t.test('a write to the data is a new version: never the old file', async (t) => {
  const { app, db, fixture, kept } = await setUp(t);
  const url = '/api/v1/events.geojson?datasets=protests';
  const before = await app.inject({ method: 'HEAD', url });
  const first = await app.inject({ method: 'GET', url });
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, event_timestamp)
    values (${fixture.datasetIds.protests ?? 0}, ${fixture.catalogIds.news ?? 0}, 'kept-new', 'A new one',
            '2024-05-05T00:00:00Z')`);
  const after = await app.inject({ method: 'GET', url, headers: { range: 'bytes=0-' } });
  t.equal(after.statusCode, 206);
  t.not(after.headers.etag, before.headers.etag, 'a new validator');
  const features = JSON.parse(after.rawPayload.toString('utf8')).features as Array<{
    properties: { title: string };
  }>;
  t.equal(features.length, JSON.parse(first.payload).features.length + 1, 'the new event is there');
  t.ok(features.some((feature) => feature.properties.title === 'A new one'));
  t.equal(kept().length, 2, 'one file per version');
});

t.test('viewers who may read different datasets never share a file', async (t) => {
  const { app, db, createUser, login } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const owner = await createUser({ trustLevel: 3 });
  await insertAccessFixture(db, owner.id);
  const token = await login(owner);
  const url = '/api/v1/events.geojson';
  const count = (payload: string) => (JSON.parse(payload).features as unknown[]).length;
  // The owner's export is written first, so a file shared by mistake would be found next.
  const owners = await app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${token}` } });
  t.equal(owners.statusCode, 200);
  const ownerBody = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  t.equal(count(ownerBody.payload), 10, 'the owner: public and private');
  for (const range of [undefined, 'bytes=0-']) {
    const anonymous = await app.inject({ method: 'GET', url, headers: range ? { range } : {} });
    t.equal(count(anonymous.rawPayload.toString('utf8')), 5, `anonymous (${range ?? 'whole'}): public only`);
  }
});

t.test('a download that stops early keeps no file', async (t) => {
  const { app, kept } = await setUp(t);
  const client = await listenOnLoopback(app);
  await new Promise<void>((resolve) => {
    const request = new URL('/api/v1/events.csv', client.base);
    import('node:http').then(({ get }) => {
      const outgoing = get(request, (response) => {
        response.once('data', () => {
          outgoing.destroy();
          resolve();
        });
      });
      outgoing.on('error', () => resolve());
    });
  });
  // The server ends the export when it sees the socket go; a whole GET afterwards writes the file.
  const whole = await app.inject({ method: 'HEAD', url: '/api/v1/events.csv' });
  t.equal(whole.statusCode, 200);
  t.equal(kept().length, 1, 'only the whole export is kept');
});

t.test('GDAL reads an export through /vsicurl/ (HEAD, then ranges)', async (t) => {
  const { app } = await setUp(t);
  const client = await listenOnLoopback(app);
  const url = `${client.base}/api/v1/events.geojson?catalog=news`;
  const expected = (
    JSON.parse((await app.inject({ method: 'GET', url: '/api/v1/events.geojson?catalog=news' })).payload)
      .features as unknown[]
  ).length;
  const { stdout } = await run('ogrinfo', ['-ro', '-so', '-al', `/vsicurl/${url}`]);
  t.match(stdout, new RegExp(`Feature Count: ${expected}\\b`), 'every feature, read by range');
});

// The exports' gzip step (adapters/http/read/export-compression.ts): a gzip download is deflated
// once per data version and kept beside the export; later gzip downloads read the kept bytes with a
// Content-Length. Inflated, every answer is exactly the identity export.

/** Until the companion's commit (after the answer's last byte) has renamed it into place. */
/** Waits for `condition`, checked every 10 ms, at most 60 s (then fails the test). */
async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries += 1) {
    if (tries > 6000) throw new Error('the kept files never reached the expected state');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test('a fresh gzip export is kept compressed, and read from that file next time', async (t) => {
  const { app, kept } = await setUp(t);
  const url = '/api/v1/events.geojson?catalog=news';
  const fresh = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
  t.equal(fresh.statusCode, 200);
  t.equal(fresh.headers['content-encoding'], 'gzip');
  t.match(String(fresh.headers.vary), /accept-encoding/i);
  t.match(String(fresh.headers.etag), /-gzip"$/, 'the validator names the coding');
  // Both keys of this view: the identity export (kept by the stream) and its gzip companion.
  await until(() => kept().length === 2);
  t.equal(kept().length, 2, 'the export and its gzip companion');
  const identity = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'identity' } });
  t.equal(identity.headers['content-encoding'], undefined);
  t.equal(Number(identity.headers['content-length']), identity.rawPayload.length, 'identity: the kept file');
  t.ok(gunzipSync(fresh.rawPayload).equals(identity.rawPayload), 'inflated: the identity export');

  const again = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
  t.equal(again.headers['content-encoding'], 'gzip');
  t.equal(Number(again.headers['content-length']), again.rawPayload.length, 'read from the kept file: sized');
  t.ok(gunzipSync(again.rawPayload).equals(identity.rawPayload), 'the same export');
  t.equal(again.headers.etag, fresh.headers.etag);
  const unchanged = await app.inject({
    method: 'GET',
    url,
    headers: { 'accept-encoding': 'gzip', 'if-none-match': String(again.headers.etag) },
  });
  t.equal(unchanged.statusCode, 304, 'revalidated as before');
  t.equal(kept().length, 2, 'no export ran again');
});

t.test('a kept export deflated for its first gzip download; ranges and brotli untouched', async (t) => {
  const { app, db, fixture, kept, settled } = await setUp(t);
  const url = '/api/v1/events.csv?catalog=news';
  const identity = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'identity' } });
  await until(() => kept().length === 1);
  const first = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
  t.equal(first.headers['content-encoding'], 'gzip');
  t.ok(gunzipSync(first.rawPayload).equals(identity.rawPayload), 'the kept file, deflated');
  await until(() => kept().length === 2);

  const part = await app.inject({
    method: 'GET',
    url,
    headers: { 'accept-encoding': 'gzip', range: 'bytes=0-9' },
  });
  t.equal(part.statusCode, 206);
  t.notOk(part.headers['content-encoding'], 'a range names identity bytes');
  t.ok(part.rawPayload.equals(identity.rawPayload.subarray(0, 10)));
  const brotli = await app.inject({
    method: 'GET',
    url,
    headers: { 'accept-encoding': 'gzip, deflate, br' },
  });
  t.equal(brotli.headers['content-encoding'], 'br', 'brotli clients keep the plugin path');

  // A new data version is a new export and a new companion, never the old bytes.
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, event_timestamp)
    values (${fixture.datasetIds.protests ?? 0}, ${fixture.catalogIds.news ?? 0}, 'gzip-new', 'Added for gzip',
            '2024-05-05T00:00:00Z')`);
  const changed = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip' } });
  t.not(changed.headers.etag, first.headers.etag);
  t.match(gunzipSync(changed.rawPayload).toString(), /Added for gzip/);
  await until(() => kept().length === 4 && settled());
});
