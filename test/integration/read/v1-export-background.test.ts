import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import t from 'tap';
import {
  exportStatus,
  EXPORT_MAX_ATTEMPTS,
  startBackgroundExport,
} from '../../../src/application/read/background-exports.ts';
import type { Viewer } from '../../../src/domain/access.ts';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { postgresExportJobStore } from '../../../src/adapters/postgres/read/export-jobs.ts';
import {
  accountsApp,
  insertAccessFixture,
  type Requester,
  unlimitedAnonymousReads,
} from '../../helpers/accounts.ts';

// Background exports (issue 36 §1; application/read/background-exports.ts): over EXPORT_SYNC_MAX_EVENTS
// a first kept-file export answers 202 with a status URL that only its requester can read; the job
// (run by the API process's pg-boss worker through the same exportEvents) writes exactly what the
// requester may read; the status answers 303 to the download, which is the kept file. A failing job
// says failed with its reason; a job whose worker stopped is sent again, then failed: never stuck.

const run = promisify(execFile);
/** The lease a worker's claim respects (the application's EXPORT_LEASE_SECONDS). */
const LEASE = 10;

type Status = {
  id: string;
  state: string;
  written: number;
  estimated: number;
  reason?: string;
  download: string;
};

/** Polls the status until it is no longer queued or running (no time limit asserted: bounded tries). */
async function settle(as: Requester, url: string) {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const answer = await as('GET', url);
    if (answer.statusCode !== 200 || !['queued', 'running'].includes((answer.json() as Status).state))
      return answer;
    await sleep(100);
  }
  throw new Error(`${url} never settled`);
}

t.test(
  'a large first export runs in the background for its requester, then redirects to the file',
  async (t) => {
    const { app, db, createUser, login, as } = await accountsApp(t, {
      policy: unlimitedAnonymousReads,
      config: { exportSyncMaxEvents: 2 },
    });
    const owner = await createUser();
    const stranger = await createUser();
    await insertAccessFixture(db, owner.id);
    const token = await login(owner);
    const asOwner = as(token);
    const asStranger = as(await login(stranger));

    const started = await asOwner('GET', '/api/v1/events.fgb?sort=id');
    t.equal(started.statusCode, 202, started.body);
    const location = started.headers.location as string;
    t.match(location, /^\/api\/v1\/exports\/[0-9a-f-]{36}$/);
    t.match(started.json(), {
      state: 'queued',
      estimated: 10,
      status: location,
      download: '/api/v1/events.fgb?sort=id',
    });
    t.equal(started.headers.etag, undefined, 'no validator on a 202');

    // Only its requester follows it: another account and an anonymous caller get the 404 of no export.
    t.equal((await asStranger('GET', location)).statusCode, 404);
    t.equal((await as(null)('GET', location)).statusCode, 404);
    t.equal((await asOwner('GET', '/api/v1/exports/not-a-uuid')).statusCode, 404);

    const done = await settle(asOwner, location);
    t.equal(done.statusCode, 303, done.body);
    t.equal(done.headers.location, '/api/v1/events.fgb?sort=id');
    t.match(done.json(), { state: 'done', written: 10, estimated: 10 });

    const file = await asOwner('GET', done.headers.location as string);
    t.equal(file.statusCode, 200, 'the kept file, no second job');
    t.ok(file.headers.etag, 'with its validator');
    t.equal(Number(file.headers['content-length']), file.rawPayload.length);
    const part = await app.inject({
      method: 'GET',
      url: done.headers.location as string,
      headers: { authorization: `Bearer ${token}`, range: 'bytes=0-7' },
    });
    t.equal(part.statusCode, 206, 'read by range');
    t.same([...part.rawPayload], [0x66, 0x67, 0x62, 0x03, 0x66, 0x67, 0x62, 0x00], 'a FlatGeobuf file');
    const written = path.join(t.testdir(), 'owner.fgb');
    writeFileSync(written, file.rawPayload);
    const info = await run('ogrinfo', ['-ro', '-so', '-al', written]);
    t.match(
      info.stdout,
      /Feature Count: 10\b/,
      'exactly what the owner may read (their private catalog too)',
    );

    // The stranger's view of the same URL is another view (5 events): a job of their own.
    const theirs = await asStranger('GET', '/api/v1/events.fgb?sort=id');
    t.equal(theirs.statusCode, 202);
    t.not(theirs.headers.location, location);
    const theirsDone = await settle(asStranger, theirs.headers.location as string);
    t.match(theirsDone.json(), { state: 'done', written: 5 });

    // The same view requested twice at once: one job.
    const [first, second] = await Promise.all([
      asOwner('GET', '/api/v1/events.parquet?sort=id'),
      asOwner('GET', '/api/v1/events.parquet?sort=id'),
    ]);
    t.equal(first.statusCode, 202);
    if (second.statusCode === 202)
      t.equal(second.headers.location, first.headers.location, 'joins the running job');
    else t.equal(second.statusCode, 200, 'or, already written, the file');
    t.equal((await settle(asOwner, first.headers.location as string)).statusCode, 303);
  },
);

t.test('a failing job says failed with its reason', async (t) => {
  const { db, as, createUser } = await accountsApp(t, {
    policy: unlimitedAnonymousReads,
    config: { exportSyncMaxEvents: 2, exportArchiveMaxTiles: 1 },
  });
  await insertAccessFixture(db, (await createUser()).id);
  const anonymous = as(null);
  const started = await anonymous('GET', '/api/v1/events.pmtiles');
  t.equal(started.statusCode, 202, started.body);
  const failed = await settle(anonymous, started.headers.location as string);
  t.equal(failed.statusCode, 200);
  t.match(failed.json(), { state: 'failed', reason: /tiles/ });
});

t.test('a running job whose worker stopped is sent again, and failed after its last attempt', async (t) => {
  const { db } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const jobs = postgresExportJobStore(db.pool);
  const sent: string[] = [];
  const background = { jobs, queue: { enqueue: async (id: string) => void sent.push(id) } };
  const { job } = await jobs.startOrJoin({
    exportKey: 'k',
    format: 'fgb',
    query: {},
    viewer: null,
    estimated: 9,
  });
  t.ok(await jobs.claim(job.id, LEASE));
  t.notOk(
    await jobs.claim(job.id, LEASE),
    'a second delivery of the job does not take it from its live worker',
  );
  t.match(await exportStatus(background, null, job.id), { state: 'running' }, 'a fresh lease: running');
  t.same(sent, []);

  // The worker was killed: its lease is no longer renewed.
  const expire = () =>
    db.pool.query(
      sql.unsafe`update view_export_jobs set heartbeat_at = now() - interval '1 minute' where id = ${job.id}`,
    );
  await expire();
  t.match(await exportStatus(background, null, job.id), { state: 'queued' }, 'queued again');
  t.same(sent, [job.id], 'and sent again');

  for (let attempt = 2; attempt <= EXPORT_MAX_ATTEMPTS; attempt += 1) {
    t.ok(await jobs.claim(job.id, LEASE), `attempt ${attempt} taken`);
    await expire();
    if (attempt < EXPORT_MAX_ATTEMPTS) await exportStatus(background, null, job.id);
  }
  t.match(
    await exportStatus(background, null, job.id),
    { state: 'failed', reason: /stopped 3 times/ },
    'after its last attempt: failed, not running',
  );
  t.match(await jobs.find(job.id), { state: 'failed' }, 'as recorded');
  t.notOk(await jobs.claim(job.id, LEASE), 'a finished job is not claimed again');
});

t.test('a queued job whose queue message was lost is sent again when followed or joined', async (t) => {
  const { db } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const jobs = postgresExportJobStore(db.pool);
  const sent: string[] = [];
  const background = {
    jobs,
    queue: { enqueue: async (id: string) => void sent.push(id) },
    syncMaxEvents: 1,
    count: async () => 9,
  };
  // The process stopped between the job's insert and its send: a queued row and no message.
  const { job } = await jobs.startOrJoin({
    exportKey: 'k\nsession',
    format: 'fgb',
    query: {},
    viewer: null,
    estimated: 9,
  });
  t.match(await exportStatus(background, null, job.id), { state: 'queued' });
  t.same(sent, [], 'a job queued moments ago is waiting for its worker, not lost');

  const age = () =>
    db.pool.query(
      sql.unsafe`update view_export_jobs set created_at = now() - interval '10 minutes',
        heartbeat_at = null where id = ${job.id}`,
    );
  await age();
  t.match(await exportStatus(background, null, job.id), { state: 'queued' });
  t.same(sent, [job.id], 'a status read sends it again');
  await exportStatus(background, null, job.id);
  t.same(sent, [job.id], 'once per resend period, not on every read');

  await age();
  const joined = await startBackgroundExport(background, {
    viewer: null,
    filter: {} as never,
    query: {},
    format: 'fgb',
    exportKey: 'k',
  });
  t.equal(joined?.id, job.id, 'the same view again joins it');
  t.same(sent, [job.id, job.id], 'and the join sends it again');
  t.ok(await jobs.claim(job.id, LEASE), 'its worker takes it');
});

t.test('a job is joined only by requests whose credential may follow it', async (t) => {
  const { db } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const jobs = postgresExportJobStore(db.pool);
  const background = {
    jobs,
    queue: { enqueue: async () => {} },
    syncMaxEvents: 1,
    count: async () => 9,
  };
  const session: Viewer = { id: 7, email: 'a@example.test', role: 'user', trustLevel: 1 };
  const withKey: Viewer = { ...session, key: { id: 3, scope: 'read', catalogIds: null } };
  const request = (viewer: Viewer) =>
    startBackgroundExport(background, {
      viewer,
      filter: {} as never,
      query: {},
      format: 'fgb',
      exportKey: 'same view',
    });
  const bySession = await request(session);
  const byKey = await request(withKey);
  t.ok(bySession && byKey);
  t.not(byKey?.id, bySession?.id, "the key does not join the session's job");
  t.match(
    await exportStatus(background, withKey, byKey?.id as string),
    { state: 'queued' },
    'and follows its own',
  );
  t.equal((await request(session))?.id, bySession?.id, 'the session again joins its own');
});
