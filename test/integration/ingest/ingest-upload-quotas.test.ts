import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import type { TestDatabase } from '../../helpers/database.ts';
import { policyFile } from '../../helpers/accounts.ts';
import {
  ingestApp,
  multipart,
  quotaUsage,
  signIn,
  storedFiles,
  streamUpload,
} from '../../fixtures/ingest/client.ts';

// Upload quotas against the real database and a real HTTP server: taken all or nothing under
// concurrency, and refused before the body is read (nothing reaches the upload directory).

const CSV = 'time,title,latitude,longitude\n2024-01-01T00:00:00Z,a,1,2\n';

const usage = (db: TestDatabase, userId: number) => quotaUsage(db.pool, userId);

t.test('40 parallel uploads at a limit of 5 take exactly 5, and refusals take nothing', async (t) => {
  const quotasFile = policyFile(t); // level 1: fileUploadsPerDay 5, importJobsPerDay 10
  const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false, { quotasFile });
  const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
  const body = multipart({ catalog: String(catalogId) }, { name: 'a.csv', content: CSV });
  const responses = await Promise.all(
    Array.from({ length: 40 }, () =>
      app.inject({
        method: 'POST',
        url: '/api/ingest-files',
        payload: body.payload,
        headers: { ...body.headers, authorization: `Bearer ${user.token}` },
      }),
    ),
  );
  const statuses = responses.map((r) => r.statusCode);
  t.equal(statuses.filter((s) => s === 201).length, 5, 'exactly the limit is recorded');
  t.equal(statuses.filter((s) => s === 403).length, 35, statuses.join(','));
  t.match(responses.find((r) => r.statusCode === 403)?.json(), {
    code: 'QUOTA_EXCEEDED',
    message: /fileUploadsPerDay/,
  });
  t.same(await usage(db, user.id), { fileUploadsPerDay: 5, importJobsPerDay: 5 });
  const files = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
    select count(*)::int as n from ingest_files where uploaded_by = ${user.id}`);
  t.equal(files, 5);
  t.equal(storedFiles(dataDir).length, 5, 'the refused uploads left no file behind');
});

t.test('an upload refused by importJobsPerDay leaves every counter as it was', async (t) => {
  const quotasFile = policyFile(t, (p) => {
    p.quotas.importJobsPerDay.levels[1] = 2;
  });
  const { app, db, catalogId } = await ingestApp(t, {}, false, { quotasFile });
  const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
  const body = multipart({ catalog: String(catalogId) }, { name: 'a.csv', content: CSV });
  const send = () =>
    app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: body.payload,
      headers: { ...body.headers, authorization: `Bearer ${user.token}` },
    });
  t.equal((await send()).statusCode, 201);
  t.equal((await send()).statusCode, 201);
  const before = await usage(db, user.id);
  t.same(before, { fileUploadsPerDay: 2, importJobsPerDay: 2 });
  for (let i = 0; i < 3; i++) {
    const refused = await send();
    t.equal(refused.statusCode, 403);
    t.match(refused.json(), { code: 'QUOTA_EXCEEDED', message: /importJobsPerDay/ });
  }
  t.same(await usage(db, user.id), before, 'no fileUploadsPerDay unit was consumed by the refusals');
  const quotas = await app.inject({
    method: 'GET',
    url: '/api/quotas',
    headers: { authorization: `Bearer ${user.token}` },
  });
  t.match(quotas.json().quotas, {
    fileUploadsPerDay: { used: 2, limit: 5, remaining: 3 },
    importJobsPerDay: { used: 2, limit: 2, remaining: 0 },
  });
});

t.test('limits are checked before the body is read: nothing reaches the upload directory', async (t) => {
  const quotasFile = policyFile(t, (p) => {
    p.quotas.fileUploadsPerDay.levels[1] = 0;
  });
  const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false, { quotasFile });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const spent = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
  const line = Buffer.from(`${'2026-01-01T00:00:00Z,'.padEnd(1023, 'x')}\n`);
  const total = 90 * 1024 * 1024;

  const refused = await Promise.all(
    Array.from({ length: 4 }, () =>
      streamUpload(
        port,
        '/api/ingest-files',
        { authorization: `Bearer ${spent.token}` },
        { catalog: String(catalogId) },
        line,
        total,
      ),
    ),
  );
  for (const result of refused) {
    if (result.status !== -1) {
      t.equal(result.status, 403, result.body);
      t.match(JSON.parse(result.body), { code: 'QUOTA_EXCEEDED', message: /fileUploadsPerDay/ });
    } else t.match(result.body, /ECONNRESET|EPIPE|socket hang up/, 'the server closed the connection');
  }
  t.same(storedFiles(dataDir), [], 'the upload directory did not grow');
  t.same(await usage(db, spent.id), {}, 'nothing was taken');

  // Trust level 0 may send files of 2 MB (maxFileSizeMB): a 3 MB stream is cut off with 413.
  const untrusted = await signIn(app, db.pool, { trustLevel: 0, owns: catalogId });
  const tooLarge = await streamUpload(
    port,
    '/api/ingest-files',
    { authorization: `Bearer ${untrusted.token}` },
    { catalog: String(catalogId) },
    line,
    3 * 1024 * 1024,
  );
  if (tooLarge.status !== -1) {
    t.equal(tooLarge.status, 413, tooLarge.body);
    t.match(JSON.parse(tooLarge.body), { code: 'FILE_TOO_LARGE', message: /2 MB/ });
  } else t.match(tooLarge.body, /ECONNRESET|EPIPE|socket hang up/);
  t.same(storedFiles(dataDir), [], 'the partial file was deleted');
  const declared = await app.inject({
    method: 'POST',
    url: '/api/ingest-files',
    headers: {
      'content-type': 'multipart/form-data; boundary=x',
      'content-length': String(5 * 1024 * 1024),
      authorization: `Bearer ${untrusted.token}`,
    },
    payload: '--x--\r\n',
  });
  t.equal(declared.statusCode, 413, 'a declared length over the trust level limit is refused up front');
  t.same(await usage(db, untrusted.id), {}, 'a file too large takes no quota');
});

t.test('the preview reads a bounded prefix: a huge single-line file is refused at once', async (t) => {
  const { app, db, dataDir } = await ingestApp(t, {}, false);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;
  const user = await signIn(app, db.pool, { trustLevel: 4 });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  const total = 50 * 1024 * 1024;
  const single = await streamUpload(
    port,
    '/api/ingest/preview',
    { authorization: `Bearer ${user.token}` },
    {},
    chunk,
    total,
  );
  if (single.status !== -1) {
    t.equal(single.status, 400, single.body);
    t.match(JSON.parse(single.body), { code: 'PREVIEW_LINE_TOO_LONG', message: /first line .* 1024 KiB/ });
  } else t.match(single.body, /ECONNRESET|EPIPE|socket hang up/);
  t.same(storedFiles(dataDir), [], 'nothing stays on disk');

  // Many lines: the answer comes from the first MiB (1,000 rows sampled), not the 50 MB.
  const rows = Buffer.from(
    Array.from({ length: 2000 }, (_, i) => `2024-01-01T00:00:00Z,row ${i},1.5,2.5\n`).join(''),
  );
  const header = Buffer.from('time,title,latitude,longitude\n');
  const { payload, headers } = multipart({}, { name: 'big.csv', content: Buffer.concat([header, rows]) });
  const bounded = await app.inject({
    method: 'POST',
    url: '/api/ingest/preview',
    payload,
    headers: { ...headers, authorization: `Bearer ${user.token}` },
  });
  t.equal(bounded.statusCode, 200, bounded.body);
  t.match(bounded.json().sheets[0], { rowsSampled: 1000, mapping: { timestamp: 'time' } });
  const many = await streamUpload(
    port,
    '/api/ingest/preview',
    { authorization: `Bearer ${user.token}` },
    {},
    Buffer.concat([header, rows]),
    total,
  );
  if (many.status !== -1) {
    t.equal(many.status, 200, many.body);
    t.match(JSON.parse(many.body).sheets[0], { rowsSampled: 1000, problem: undefined });
  } else t.fail(`the bounded preview answered nothing: ${many.body}`);
  t.same(storedFiles(dataDir), [], 'nothing stays on disk');
});

t.test('the preview and the upload are rate limited before their body is read', async (t) => {
  const quotasFile = policyFile(t, (p) => {
    (p.rateLimits as { byTrustLevel: Record<number, unknown> }).byTrustLevel[1] = {
      burst: { seconds: 3600, limit: 2 },
    };
  });
  const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false, { quotasFile });
  const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
  const body = multipart({ catalog: String(catalogId) }, { name: 'a.csv', content: CSV });
  const send = (url: string) =>
    app.inject({
      method: 'POST',
      url,
      payload: body.payload,
      headers: { ...body.headers, authorization: `Bearer ${user.token}` },
    });
  t.equal((await send('/api/ingest/preview')).statusCode, 200);
  t.equal((await send('/api/ingest-files')).statusCode, 201);
  for (const url of ['/api/ingest/preview', '/api/ingest-files']) {
    const limited = await send(url);
    t.equal(limited.statusCode, 429, limited.body);
    t.match(limited.json(), { code: 'RATE_LIMITED', limitType: 'burst' });
  }
  t.equal(storedFiles(dataDir).length, 1, 'only the accepted upload is on disk');
});
