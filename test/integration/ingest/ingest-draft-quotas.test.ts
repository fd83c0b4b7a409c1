import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { loadAccessPolicy } from '../../../src/adapters/config/access-policy.ts';
import { localFileStore } from '../../../src/adapters/files/local-file-store.ts';
import { postgresQuotas } from '../../../src/adapters/postgres/accounts/quotas.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresIngestDrafts } from '../../../src/adapters/postgres/ingest/ingest-drafts.ts';
import { removeExpiredDrafts } from '../../../src/application/ingest/import-wizard.ts';
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

// Issue 30 §1, every stored byte counts: a draft (start=false) takes fileUploadsPerDay when it is
// stored and its size of draftStorageMB until it starts or expires; an account whose drafts fill
// the cap is refused before its body is read.

const CSV = 'when,lat,lon,name\n2026-01-01T00:00:00Z,52.5,13.4,a\n2026-01-02T00:00:00Z,48.8,2.3,b\n';

const usage = (db: TestDatabase, userId: number) => quotaUsage(db.pool, userId);

t.test(
  'drafts take the upload quota and draft storage; a full account is refused before its body',
  async (t) => {
    const quotasFile = policyFile(t, (p) => {
      p.quotas.draftStorageMB.levels[1] = 3;
    });
    const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false, { quotasFile });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
    const auth = { authorization: `Bearer ${user.token}` };
    const draft = (content: string | Buffer) => {
      const body = multipart({ catalog: String(catalogId), start: 'false' }, { name: 'quakes.csv', content });
      return app.inject({
        method: 'POST',
        url: '/api/ingest-files',
        payload: body.payload,
        headers: { ...body.headers, ...auth },
      });
    };

    const small = await draft(CSV);
    t.equal(small.statusCode, 201, small.body);
    t.same(await usage(db, user.id), { draftStorageMB: 1, fileUploadsPerDay: 1 }, 'a tiny draft takes 1 MB');
    // 1.5 MiB of rows: 2 MB (whole MB, rounded up).
    const rows = Buffer.from(`${'2026-01-01T00:00:00Z,1,2,'.padEnd(1023, 'x')}\n`.repeat(1536));
    const larger = await draft(Buffer.concat([Buffer.from('when,lat,lon,name\n'), rows]));
    t.equal(larger.statusCode, 201, larger.body);
    t.same(await usage(db, user.id), { draftStorageMB: 3, fileUploadsPerDay: 2 });

    const quotas = await app.inject({ method: 'GET', url: '/api/quotas', headers: auth });
    t.match(quotas.json().quotas, {
      draftStorageMB: { used: 3, limit: 3, remaining: 0 },
      fileUploadsPerDay: { used: 2, limit: 5, remaining: 3 },
    });

    const page = await app.inject({ method: 'GET', url: '/account', headers: auth });
    t.equal(page.statusCode, 200);
    t.match(
      page.body,
      /<tr data-quota="draftStorageMB">\s*<td>Megabytes of uploads waiting as drafts \(start=false\)<\/td>\s*<td>\s*3\s*<\/td>\s*<td>\s*3\s*<\/td>/,
      '/account shows the drafts against their cap',
    );

    // At the cap: 90 MB streamed on a real socket are refused before the body is read.
    const line = Buffer.from(`${'2026-01-01T00:00:00Z,'.padEnd(1023, 'x')}\n`);
    const filesBefore = storedFiles(dataDir).length;
    for (const fields of [{ start: 'false' }, {}] as Record<string, string>[]) {
      const refused = await streamUpload(
        port,
        '/api/ingest-files',
        auth,
        { catalog: String(catalogId), ...fields },
        line,
        90 * 1024 * 1024,
      );
      if (refused.status !== -1) {
        t.equal(refused.status, 403, refused.body);
        t.match(JSON.parse(refused.body), {
          error: 'Forbidden',
          code: 'QUOTA_EXCEEDED',
          message: /draftStorageMB/,
        });
      } else t.match(refused.body, /ECONNRESET|EPIPE|socket hang up/, 'the server closed the connection');
    }
    t.equal(storedFiles(dataDir).length, filesBefore, 'nothing more reached the upload directory');
    t.same(
      await usage(db, user.id),
      { draftStorageMB: 3, fileUploadsPerDay: 2 },
      'the refusals took nothing',
    );

    // Starting a draft: its bytes leave the draft storage, and the upload is not counted twice.
    const started = await app.inject({
      method: 'POST',
      url: '/api/ingest/configure',
      payload: { draft: small.json().draft.id, start: true },
      headers: auth,
    });
    t.equal(started.statusCode, 201, started.body);
    t.same(await usage(db, user.id), { draftStorageMB: 2, fileUploadsPerDay: 2, importJobsPerDay: 1 });

    // An expired draft is removed with its file, and gives its storage back.
    await db.pool.query(sql.unsafe`update ingest_drafts set expires_at = now() - interval '1 minute'
    where started_at is null`);
    const quotasOf = postgresQuotas(db.pool, loadAccessPolicy(quotasFile), systemClock);
    const root = path.join(dataDir, 'ingest');
    const drafts = postgresIngestDrafts(db.pool);
    t.same(
      await removeExpiredDrafts({
        drafts,
        fileStore: localFileStore(root),
        clock: systemClock,
        quotas: quotasOf,
      }),
      { removed: 1 },
    );
    t.same(await usage(db, user.id), { fileUploadsPerDay: 2, importJobsPerDay: 1 });
    t.equal((await draft(CSV)).statusCode, 201, 'room again for a draft');
  },
);

t.test('concurrent drafts cannot pass the cap together', async (t) => {
  const quotasFile = policyFile(t, (p) => {
    p.quotas.draftStorageMB.levels[1] = 2;
    p.quotas.fileUploadsPerDay.levels[1] = 50;
  });
  const { app, db, catalogId } = await ingestApp(t, {}, false, { quotasFile });
  const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
  const body = multipart({ catalog: String(catalogId), start: 'false' }, { name: 'a.csv', content: CSV });
  const statuses = (
    await Promise.all(
      Array.from({ length: 12 }, () =>
        app.inject({
          method: 'POST',
          url: '/api/ingest-files',
          payload: body.payload,
          headers: { ...body.headers, authorization: `Bearer ${user.token}` },
        }),
      ),
    )
  ).map((r) => r.statusCode);
  t.equal(statuses.filter((s) => s === 201).length, 2, statuses.join(','));
  t.equal(statuses.filter((s) => s === 403).length, 10);
  t.same(await usage(db, user.id), { draftStorageMB: 2, fileUploadsPerDay: 2 });
  const drafts = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
    select count(*)::int as n from ingest_drafts where uploaded_by = ${user.id}`);
  t.equal(drafts, 2);
});
