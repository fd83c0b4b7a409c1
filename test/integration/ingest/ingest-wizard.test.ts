import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { existsSync } from 'node:fs';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresIngestDrafts } from '../../../src/adapters/postgres/ingest/ingest-drafts.ts';
import { localFileStore } from '../../../src/adapters/files/local-file-store.ts';
import { removeExpiredDrafts } from '../../../src/application/ingest/import-wizard.ts';
import { authHeaders, ingestApp, signIn, upload } from '../../fixtures/ingest/client.ts';
import { xlsx } from '../../fixtures/ingest/workbooks.ts';

// The import wizard's API: an upload that waits (`start=false`), configure, validate-preview and
// start, each refusing steps out of order, an expired upload, a mapping naming a missing column and
// a sheet out of range with a clear error and nothing changed; readable dataset slugs; the URL
// preview through the SSRF guard.

const CSV = 'when,lat,lon,name\n2026-01-01T00:00:00Z,52.5,13.4,a\n2026-01-02T00:00:00Z,48.8,2.3,b\n';
const Count = row(Type.Object({ n: Type.Number() }));

async function wizardApp(t: Test, allowPrivateAddresses = true) {
  const setup = await ingestApp(
    t,
    { fetch: { maxBytes: 1024 * 1024, timeoutMs: 3000, allowPrivateAddresses } },
    false,
  );
  const post = (url: string, payload: unknown, headers = authHeaders(setup.app)) =>
    setup.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers });
  const count = (table: 'ingest_files' | 'datasets' | 'ingest_drafts') =>
    setup.db.pool.oneFirst(sql.type(Count)`select count(*)::int as n from ${sql.identifier([table])}`);
  const draft = async (name = 'earthquakes.csv', content: string | Buffer = CSV) => {
    const uploaded = await upload(setup.app, setup.catalogId, { name, content }, { start: 'false' });
    t.equal(uploaded.statusCode, 201, uploaded.body);
    return uploaded.json().draft as { id: number; sheets: (string | null)[]; expiresAt: string };
  };
  return { ...setup, post, count, draft };
}

t.test(
  'upload, validate, configure and start: each step checked, nothing changed by a refused one',
  async (t) => {
    const { app, db, post, count, draft, catalogId, dataDir } = await wizardApp(t);
    const waiting = await draft();
    t.same(waiting.sheets, [null]);
    t.equal(await count('ingest_files'), 0, 'a waiting upload is no import yet');
    t.equal(await count('datasets'), 0, 'and makes no dataset');

    const missing = await post('/api/ingest/validate-preview', {
      draft: waiting.id,
      settings: { fieldMapping: { timestamp: 'time', latitude: 'lat' } },
    });
    t.equal(missing.statusCode, 200, missing.body);
    t.equal(missing.json().valid, false);
    t.match(missing.json().problems, [
      { field: 'settings.fieldMapping.timestamp', code: 'MISSING_COLUMN', message: /"time".*"when"/ },
    ]);
    t.same(
      missing.json().sheets[0].sample[0],
      ['when', 'lat', 'lon', 'name'],
      'with the preview of the rows',
    );

    const outOfRange = await post('/api/ingest/configure', {
      draft: waiting.id,
      settings: { sheets: [{ sheetIndex: 3, dataset: 'new' }] },
    });
    t.equal(outOfRange.statusCode, 400, outOfRange.body);
    t.equal(outOfRange.json().code, 'SHEET_OUT_OF_RANGE');
    t.match(outOfRange.json().message, /sheet index 3 is out of range: the file has 1 sheet/);

    const badMapping = { fieldMapping: { timestamp: 'time', latitude: 'lat', longitude: 'lon' } };
    const stored = await post('/api/ingest/configure', { draft: waiting.id, settings: badMapping });
    t.equal(stored.statusCode, 200, stored.body);
    t.same(stored.json().draft.configuration.settings, badMapping);
    const refused = await post('/api/ingest/configure', { draft: waiting.id, start: true });
    t.equal(refused.statusCode, 400, 'a start validates first');
    t.equal(refused.json().code, 'MISSING_COLUMN');
    t.equal(await count('ingest_files'), 0, 'nothing started');
    t.equal(await count('datasets'), 0);

    const good = { fieldMapping: { timestamp: 'when', latitude: 'lat', longitude: 'lon', title: 'name' } };
    const valid = await post('/api/ingest/validate-preview', { draft: waiting.id, settings: good });
    t.same([valid.json().valid, valid.json().problems], [true, []]);
    t.same(
      (await post('/api/ingest/configure', { draft: waiting.id })).json().draft.configuration.settings,
      badMapping,
      'validate-preview stored nothing',
    );
    const started = await post('/api/ingest/configure', { draft: waiting.id, settings: good, start: true });
    t.equal(started.statusCode, 201, started.body);
    const doc = started.json().doc;
    t.equal(doc.catalog, catalogId);
    t.equal(doc.jobs[0].config.fieldMapping.timestamp, 'when');
    t.equal(started.json().draft.startedFile, doc.id);
    const slug = await db.pool.oneFirst(
      sql.type(
        row(Type.Object({ slug: Type.String() })),
      )`select slug from datasets where id = ${doc.datasets[0]}`,
    );
    t.equal(slug, 'earthquakes', 'a readable slug from the file name');
    const importedPath = await db.pool.oneFirst(
      sql.type(
        row(Type.Object({ p: Type.String() })),
      )`select stored_path as p from ingest_files where id = ${doc.id}`,
    );
    t.ok(existsSync(path.join(dataDir, 'ingest', importedPath)), 'the import reads the uploaded file');

    for (const step of ['/api/ingest/configure', '/api/ingest/validate-preview']) {
      const again = await post(step, { draft: waiting.id, settings: good });
      t.equal(again.statusCode, 409, `${step} after the start`);
      t.equal(again.json().code, 'IMPORT_ALREADY_STARTED');
    }
    t.equal(await count('ingest_files'), 1);

    const second = await upload(app, catalogId, { name: 'earthquakes.csv', content: CSV });
    const secondSlug = await db.pool.oneFirst(
      sql.type(
        row(Type.Object({ slug: Type.String() })),
      )`select slug from datasets where id = ${second.json().doc.datasets[0]}`,
    );
    t.equal(secondSlug, 'earthquakes-2', 'the next import of the same name gets the next free slug');
  },
);

t.test('others cannot see an upload; an expired one is refused and cleaned up', async (t) => {
  const { app, db, post, count, draft, dataDir } = await wizardApp(t);
  const waiting = await draft();
  const stranger = await signIn(app, db.pool);
  const strangers = { authorization: `Bearer ${stranger.token}` };
  t.equal((await post('/api/ingest/validate-preview', { draft: waiting.id }, {})).statusCode, 401);
  const hidden = await post('/api/ingest/validate-preview', { draft: waiting.id }, strangers);
  t.equal(hidden.statusCode, 404);
  t.equal(hidden.json().code, 'UPLOAD_NOT_FOUND');
  t.equal(
    (await post('/api/ingest/configure', { draft: waiting.id, start: true }, strangers)).statusCode,
    404,
  );
  t.equal(
    (await post('/api/ingest/configure', { draft: 999999, start: true })).statusCode,
    404,
    'before any upload',
  );

  await db.pool.query(sql.unsafe`update ingest_drafts set expires_at = now() - interval '1 minute'`);
  const expired = await post('/api/ingest/configure', { draft: waiting.id, start: true });
  t.equal(expired.statusCode, 409, expired.body);
  t.equal(expired.json().code, 'UPLOAD_EXPIRED');
  t.match(expired.json().message, /upload the file again/);
  t.equal(await count('ingest_files'), 0);

  const storedPath = await db.pool.oneFirst(
    sql.type(row(Type.Object({ p: Type.String() })))`select stored_path as p from ingest_drafts`,
  );
  const root = path.join(dataDir, 'ingest');
  t.ok(existsSync(path.join(root, storedPath)));
  const drafts = postgresIngestDrafts(db.pool);
  const quotas = { give: async () => {} };
  t.same(await removeExpiredDrafts({ drafts, fileStore: localFileStore(root), clock: systemClock, quotas }), {
    removed: 1,
  });
  t.notOk(existsSync(path.join(root, storedPath)), 'the file is removed');
  t.equal(await count('ingest_drafts'), 0);
});

t.test('a workbook: sheets named at upload, an index past the last sheet refused', async (t) => {
  const { post, draft } = await wizardApp(t);
  const book = xlsx([
    {
      name: 'Quakes',
      rows: [
        ['when', 'lat', 'lon'],
        ['2026-01-01T00:00:00Z', 52.5, 13.4],
      ],
    },
    {
      name: 'Floods',
      rows: [
        ['when', 'lat', 'lon'],
        ['2026-01-02T00:00:00Z', 48.8, 2.3],
      ],
    },
  ]);
  const waiting = await draft('events.xlsx', book);
  t.same(waiting.sheets, ['Quakes', 'Floods']);
  const checked = await post('/api/ingest/validate-preview', {
    draft: waiting.id,
    settings: { sheets: [{ sheetIndex: 2, dataset: 'new' }] },
  });
  t.equal(checked.json().valid, false);
  t.match(checked.json().problems, [
    { code: 'SHEET_OUT_OF_RANGE', sheetIndex: 2, message: /has 2 sheets \(0-1\)/ },
  ]);
  t.equal(checked.json().sheets.length, 2);
});

t.test('the preview of a URL goes through the SSRF guard', async (t) => {
  const server = http.createServer((request, response) => {
    if (request.url === '/redirect') response.writeHead(302, { location: 'http://127.0.0.1:1/x.csv' }).end();
    else response.writeHead(200, { 'content-type': 'text/csv' }).end(CSV);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const open = await wizardApp(t, true);
  const previewed = await open.post('/api/ingest/preview-url', { url: `${base}/events.csv` });
  t.equal(previewed.statusCode, 200, previewed.body);
  t.equal(previewed.json().fileName, 'events.csv');
  t.same(previewed.json().sheets[0].sample[0], ['when', 'lat', 'lon', 'name']);
  t.equal((await open.post('/api/ingest/preview-url', { url: `${base}/events.csv` }, {})).statusCode, 401);
  t.equal((await open.post('/api/ingest/preview-url', { url: 'file:///etc/passwd' })).statusCode, 400);

  const guarded = await wizardApp(t, false);
  const blocked = await guarded.post('/api/ingest/preview-url', { url: `${base}/events.csv` });
  t.equal(blocked.statusCode, 400, blocked.body);
  t.equal(blocked.json().code, 'SSRF_BLOCKED');
});
