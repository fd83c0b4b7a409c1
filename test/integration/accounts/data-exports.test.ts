import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { localExportArchive } from '../../../src/adapters/files/export-archive.ts';
import { ZipArchive } from '../../../src/adapters/files/zip-reader.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresDataExportStore } from '../../../src/adapters/postgres/accounts/data-export-store.ts';
import { removeExpiredExports } from '../../../src/application/accounts/export-own-data.ts';
import { ingestApp, signIn, upload, waitForFile } from '../../fixtures/ingest/client.ts';

// A user's export of their own data, built by the real data-export job into a ZIP: one at a time,
// downloadable by its owner only (others, admins too, 404), refused once expired, its file removed.

const CSV =
  'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,"=cmd|x, y"\n2026-01-02T00:00:00Z,48.8,2.3,b\n';

async function setup(t: Test, workers: boolean) {
  const base = await ingestApp(t, {}, workers);
  const stranger = await signIn(base.app, base.db.pool);
  const admin = await signIn(base.app, base.db.pool, { role: 'admin' });
  const call = (method: 'GET' | 'POST', url: string, token: string | null) =>
    base.app.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { ...base, stranger, admin, call };
}

t.test('one export at a time; a second request while one waits is a 409 that changes nothing', async (t) => {
  const { db, user, call } = await setup(t, false);
  t.equal((await call('POST', '/api/data-exports/request', null)).statusCode, 401);
  const first = await call('POST', '/api/data-exports/request', user.token);
  t.equal(first.statusCode, 202, first.body);
  t.match(first.json().doc, { status: 'queued', download: null });
  const second = await call('POST', '/api/data-exports/request', user.token);
  t.equal(second.statusCode, 409);
  t.equal(second.json().code, 'EXPORT_IN_PROGRESS');
  const count = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
    select count(*)::int as n from data_exports`);
  t.equal(count, 1, 'nothing stored by the refused request');
  const download = await call('GET', `/api/data-exports/${first.json().doc.id}/download`, user.token);
  t.equal(download.statusCode, 409);
  t.equal(download.json().code, 'EXPORT_NOT_READY');
});

t.test(
  "over 5 exports in a rolling day: the spec's rate-limit error until the oldest is a day old",
  async (t) => {
    const { db, user, call } = await setup(t, false);
    // Five finished requests, the oldest 2 hours ago: the sixth waits until that one is a day old.
    await db.pool.query(sql.unsafe`
    insert into data_exports (user_id, status, created_at, finished_at)
    select ${user.id}, 'failed', now() - make_interval(mins => 120 - i), now()
    from generate_series(0, 4) as i`);
    const oldest = await db.pool.oneFirst(sql.type(row(Type.Object({ at: Type.String() })))`
    select to_char((min(created_at) + interval '1 day') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at
    from data_exports where user_id = ${user.id}`);
    const refused = await call('POST', '/api/data-exports/request', user.token);
    t.equal(refused.statusCode, 429);
    t.same(refused.json(), {
      success: false,
      error: 'Rate limit exceeded',
      message: `at most 5 exports a day; try again after ${oldest}`,
      code: 'EXPORT_RATE_LIMITED',
      limitType: 'daily',
      retryAfter: oldest,
    });
    t.equal(refused.headers['x-ratelimit-limit'], '5');
    t.equal(refused.headers['x-ratelimit-remaining'], '0');
    t.equal(refused.headers['x-ratelimit-reset'], oldest);
    t.match(refused.headers['retry-after'], /^[1-9]\d*$/);
    const count = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
    select count(*)::int as n from data_exports where user_id = ${user.id}`);
    t.equal(count, 5, 'nothing stored by the refused request');
  },
);

t.test(
  'the job builds a ZIP of the user’s data; only its owner downloads it, until it expires',
  async (t) => {
    const { app, db, catalogId, user, stranger, admin, call, dataDir } = await setup(t, true);
    const uploaded = await upload(app, catalogId, { name: 'mine.csv', content: CSV });
    await waitForFile(app, uploaded.json().doc.id);
    const requested = await call('POST', '/api/data-exports/request', user.token);
    t.equal(requested.statusCode, 202, requested.body);
    const id = requested.json().doc.id as number;
    let doc = requested.json().doc;
    for (let i = 0; i < 120 && (doc.status === 'queued' || doc.status === 'running'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      doc = (await call('GET', `/api/data-exports/${id}`, user.token)).json();
    }
    t.match(doc, { status: 'ready', expired: false, download: `/api/data-exports/${id}/download` });

    for (const other of [stranger, admin]) {
      t.equal((await call('GET', `/api/data-exports/${id}`, other.token)).statusCode, 404);
      t.equal((await call('GET', `/api/data-exports/${id}/download`, other.token)).statusCode, 404);
    }
    t.equal((await call('GET', `/api/data-exports/${id}/download`, null)).statusCode, 401);

    const download = await call('GET', `/api/data-exports/${id}/download`, user.token);
    t.equal(download.statusCode, 200);
    t.equal(download.headers['content-type'], 'application/zip');
    const zipFile = path.join(mkdtempSync(path.join(tmpdir(), 'chronomap-export-')), 'export.zip');
    writeFileSync(zipFile, download.rawPayload);
    const zip = await ZipArchive.open(zipFile);
    t.teardown(() => zip.close());
    const texts = new Map<string, string | null>();
    for (const name of [
      'account.json',
      'catalogs.json',
      'datasets.json',
      'imports.json',
      'scrapers.json',
      'events.csv',
    ])
      texts.set(name, await zip.text(name));
    const json = (name: string) => JSON.parse(texts.get(name) ?? 'null');
    t.match(json('account.json'), { id: user.id, email: user.email });
    t.notOk('password_hash' in json('account.json'), 'no password hash');
    t.match(json('catalogs.json'), [{ id: catalogId }]);
    t.equal(json('datasets.json').length, 1);
    t.match(json('imports.json'), [{ original_name: 'mine.csv', jobs: [{ stage: 'completed' }] }]);
    t.same(json('scrapers.json'), []);
    const events: string[] = texts.get('events.csv')?.trim().split('\r\n') ?? [];
    t.equal(events[0], 'id,dataset,uniqueId,title,eventTimestamp,longitude,latitude,data');
    t.equal(events.length, 3, 'a header and both events');
    t.ok(
      events.some((line) => line.includes(`"'=cmd|x, y"`)),
      'a formula is kept as text, quoted',
    );

    await db.pool.query(sql.unsafe`update data_exports set expires_at = now() - interval '1 minute'`);
    const expired = await call('GET', `/api/data-exports/${id}/download`, user.token);
    t.equal(expired.statusCode, 409);
    t.equal(expired.json().code, 'EXPORT_EXPIRED');
    const root = path.join(dataDir, 'exports');
    const stored = await db.pool.oneFirst(
      sql.type(
        row(Type.Object({ p: Type.String() })),
      )`select stored_path as p from data_exports where id = ${id}`,
    );
    t.ok(existsSync(path.join(root, stored)));
    const removed = await removeExpiredExports({
      exports: postgresDataExportStore(db.pool),
      archive: localExportArchive(root),
      clock: systemClock,
    });
    t.same(removed, { removed: 1 });
    t.notOk(existsSync(path.join(root, stored)), 'the file is gone');
    t.match((await call('GET', `/api/data-exports/${id}`, user.token)).json(), {
      expired: true,
      download: null,
    });
  },
);
