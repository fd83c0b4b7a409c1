import t from 'tap';
import {
  buildDataExport,
  getDataExport,
  latestDataExport,
  openDataExport,
  removeExpiredExports,
  requestDataExport,
} from '../../../../src/application/accounts/export-own-data.ts';
import { DATA_EXPORT_LIMITS, EXPORT_FILES } from '../../../../src/domain/accounts/data-export.ts';
import { dataExportDeps } from './data-export-fakes.ts';

// A user's export of their own data on the in-memory fakes: requested (one at a time, a few a day),
// built into an archive of every file, downloaded by its owner only until it expires.

const ALICE = { id: 1, email: 'alice@example.org', role: 'user', trustLevel: 1 } as const;
const BOB = { id: 2, email: 'bob@example.org', role: 'admin', trustLevel: 5 } as const;
const HOUR = 60 * 60 * 1000;

t.test('a request is queued for the job, and only its owner sees it', async (t) => {
  const deps = dataExportDeps();
  const requested = await requestDataExport(deps, ALICE);
  t.match(requested, { userId: ALICE.id, status: 'queued' });
  t.same(deps.queued, [requested.id]);
  t.same(await getDataExport(deps, ALICE, requested.id), requested);
  t.same(await latestDataExport(deps, ALICE), requested);
  const missing = { name: 'NotFoundError', code: 'EXPORT_NOT_FOUND' };
  await t.rejects(getDataExport(deps, BOB, requested.id), missing, 'an admin is anyone else too');
  await t.rejects(getDataExport(deps, ALICE, requested.id + 1), missing);
  t.equal(await latestDataExport(deps, BOB), null);
  await t.rejects(requestDataExport(deps, null), { name: 'UnauthorizedError' });
});

t.test('one export at a time, and at most a few a day', async (t) => {
  const deps = dataExportDeps();
  const first = await requestDataExport(deps, ALICE);
  await t.rejects(requestDataExport(deps, ALICE), { kind: 'conflict', code: 'EXPORT_IN_PROGRESS' });
  await buildDataExport(deps, first.id);
  for (let i = 1; i < DATA_EXPORT_LIMITS.perDay; i += 1) {
    deps.clock.advance(HOUR);
    await buildDataExport(deps, (await requestDataExport(deps, ALICE)).id);
  }
  deps.clock.advance(HOUR);
  await t.rejects(requestDataExport(deps, ALICE), {
    name: 'RateLimitedError',
    code: 'EXPORT_RATE_LIMITED',
    decision: { limitType: 'daily', reset: new Date(Date.parse(first.createdAt) + 24 * HOUR) },
  });
  deps.clock.at = new Date(Date.parse(first.createdAt) + 24 * HOUR);
  t.ok(await requestDataExport(deps, ALICE), 'once the first is a day old');
});

t.test("the job writes every file of the user's data, and the export is ready for a day", async (t) => {
  const deps = dataExportDeps();
  const events = Array.from({ length: 3 }, (_, i) => ({
    id: i + 1,
    dataset: 7,
    title: `Event, ${i + 1}`,
    data: { n: i },
  }));
  deps.data.set(ALICE.id, { account: { id: ALICE.id, email: ALICE.email }, catalogs: [{ id: 3 }], events });
  const { id } = await requestDataExport(deps, ALICE);
  await buildDataExport(deps, id);
  const ready = await getDataExport(deps, ALICE, id);
  t.match(ready, { status: 'ready', storedPath: `exports/${id}.zip`, error: null });
  t.equal(ready.expiresAt, new Date(deps.clock.now().getTime() + DATA_EXPORT_LIMITS.ttlMs).toISOString());
  const files = deps.archive.files.get(`exports/${id}.zip`);
  t.same([...(files?.keys() ?? [])], EXPORT_FILES);
  t.same(JSON.parse(files?.get('account.json') ?? ''), { id: ALICE.id, email: ALICE.email });
  t.same(JSON.parse(files?.get('catalogs.json') ?? ''), [{ id: 3 }]);
  t.equal(
    files?.get('events.csv'),
    'id,dataset,uniqueId,title,eventTimestamp,longitude,latitude,data\r\n' +
      '1,7,,"Event, 1",,,,"{""n"":0}"\r\n2,7,,"Event, 2",,,,"{""n"":1}"\r\n3,7,,"Event, 3",,,,"{""n"":2}"\r\n',
  );
  t.equal(
    ready.sizeBytes,
    [...(files?.values() ?? [])].reduce((sum, text) => sum + Buffer.byteLength(text), 0),
  );
  await buildDataExport(deps, id);
  t.same(await getDataExport(deps, ALICE, id), ready, 'a finished export is not built again');
});

t.test('a failed build says why, and another may be requested', async (t) => {
  const deps = dataExportDeps();
  deps.archive.failWith = new Error('disk full');
  const { id } = await requestDataExport(deps, ALICE);
  await buildDataExport(deps, id);
  t.match(await getDataExport(deps, ALICE, id), { status: 'failed', error: 'disk full', storedPath: null });
  await t.rejects(openDataExport(deps, ALICE, id), { code: 'EXPORT_NOT_READY' });
  t.ok(await requestDataExport(deps, ALICE));
});

t.test('a build stopped by its worker stays running for the retry, which builds it', async (t) => {
  const deps = dataExportDeps();
  const { id } = await requestDataExport(deps, ALICE);
  const stop = new AbortController();
  stop.abort(new Error('the process is shutting down'));
  await t.rejects(
    buildDataExport(deps, id, stop.signal),
    /shutting down/,
    'the job throws: pg-boss retries it',
  );
  t.match(await getDataExport(deps, ALICE, id), { status: 'running', error: null, storedPath: null });
  t.equal(deps.archive.files.size, 0, 'nothing written is kept');
  await buildDataExport(deps, id);
  t.match(await getDataExport(deps, ALICE, id), { status: 'ready' });
});

t.test('a download is for a ready export before it expires; then its file is removed', async (t) => {
  const deps = dataExportDeps();
  deps.data.set(ALICE.id, { account: { id: ALICE.id } });
  const { id } = await requestDataExport(deps, ALICE);
  await t.rejects(openDataExport(deps, ALICE, id), { kind: 'conflict', code: 'EXPORT_NOT_READY' });
  await buildDataExport(deps, id);
  const { record, stream } = await openDataExport(deps, ALICE, id);
  t.equal(record.id, id);
  let listed = '';
  for await (const chunk of stream) listed += String(chunk);
  t.same(JSON.parse(listed), EXPORT_FILES);
  await t.rejects(openDataExport(deps, BOB, id), { code: 'EXPORT_NOT_FOUND' });
  t.same(await removeExpiredExports(deps), { removed: 0 }, 'not expired yet');
  deps.clock.advance(DATA_EXPORT_LIMITS.ttlMs);
  await t.rejects(openDataExport(deps, ALICE, id), { kind: 'conflict', code: 'EXPORT_EXPIRED' });
  t.same(await removeExpiredExports(deps), { removed: 1 });
  t.equal(deps.archive.files.size, 0, 'the file is gone');
  t.match(await getDataExport(deps, ALICE, id), { status: 'ready', storedPath: null }, 'the record stays');
  t.same(await removeExpiredExports(deps), { removed: 0 });
});
