import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../../src/adapters/security/scrypt-password-hasher.ts';
import type { TrustLevel } from '../../../src/domain/accounts/users.ts';
import { multipart } from '../../fixtures/ingest/client.ts';
import { PASSWORD, policyFile, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { type TestDatabase, testDatabase } from '../../helpers/database.ts';
import { freePort, startHaproxy } from '../../helpers/haproxy.ts';
import { assertEachMinuteRunOnce } from '../../helpers/schedule-passes.ts';
import {
  failed,
  type HostProcess,
  type Outcome,
  readLoad,
  request,
  startHost,
} from '../../helpers/scale-out.ts';
import { ensureCatalog } from '../../helpers/collections.ts';

// Two API processes and two workers, each as if on a host of its own, behind a real HAProxy, on one
// database, under a mixed load of reads, uploads and a schedule due every minute. Shown: every
// upload's events are created once; the schedule runs once per due minute across both workers; an
// API process killed with SIGKILL mid-load is routed around (no failed request after HAProxy marks
// it down, and none lost before: HAProxy retries a request that got no answer); a worker killed
// mid-import leaves the import to the other one, which completes it; the anonymous rate limit and
// the upload quota hold across both API processes. Findings: docs/scaling.md, "Many processes behind a load balancer".
t.setTimeout(6 * 60_000);

const MINUTE = 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ANONYMOUS_BURST = 30;
const BIG_IMPORT_ROWS = 20_000;

const csv = (prefix: string, rows: number) =>
  ['id,time,latitude,longitude,title']
    .concat(
      Array.from(
        { length: rows },
        (_, i) =>
          `${prefix}-${i},2026-01-01T00:${String(i % 60).padStart(2, '0')}:00Z,${(i % 170) - 85},${(i % 350) - 175},${prefix} ${i}`,
      ),
    )
    .join('\n');

/** A feed for the scheduled import: each request gets two rows no other request got. */
async function startFeed(t: Test) {
  let requests = 0;
  const server = http.createServer((_request, response) => {
    requests += 1;
    response.writeHead(200, { 'content-type': 'text/csv' }).end(csv(`feed${requests}`, 2));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events.csv`,
    requests: () => requests,
  };
}

async function createUser(db: TestDatabase, name: string, trustLevel: TrustLevel) {
  const hasher = scryptPasswordHasher({ N: 1024 });
  return postgresUserStore(db.pool).upsert({
    email: `${name}-${process.pid}@example.org`,
    passwordHash: await hasher.hash(PASSWORD),
    role: 'user',
    trustLevel,
  });
}

/** A catalog owned by `ownerId` (uploads need write access to their catalog). */
async function ownedCatalog(db: TestDatabase, slug: string, ownerId: number, isPublic: boolean) {
  const id = await ensureCatalog(db.pool, { slug, title: slug, isPublic });
  await db.pool.query(sql.unsafe`update catalogs set created_by = ${ownerId} where id = ${id}`);
  return id;
}

async function login(base: string, email: string): Promise<Record<string, string>> {
  const response = await request(`${base}/api/users/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ email, password: PASSWORD })),
  });
  if (response.status !== 200) throw new Error(`login: ${response.status} ${response.body}`);
  return { authorization: `Bearer ${(JSON.parse(response.body) as { token: string }).token}` };
}

type Upload = Outcome & { body: string; name: string; fileId?: number; datasetId?: number; rows: number };

async function uploadCsv(
  base: string,
  auth: Record<string, string>,
  catalogId: number,
  name: string,
  rows: number,
): Promise<Upload> {
  const form = multipart({ catalog: String(catalogId) }, { name: `${name}.csv`, content: csv(name, rows) });
  const outcome = await request(`${base}/api/ingest-files`, {
    method: 'POST',
    headers: { ...form.headers, ...auth },
    body: form.payload,
  });
  if (outcome.status !== 201) return { ...outcome, rows, name: `${name}.csv` };
  const doc = (JSON.parse(outcome.body) as { doc: { id: number; datasets: number[] } }).doc;
  return { ...outcome, rows, name: `${name}.csv`, fileId: doc.id, datasetId: doc.datasets[0] };
}

const Count = row(Type.Object({ n: Type.Number() }));

t.test('2 API + 2 worker processes behind HAProxy: mixed load, an API and a worker killed', async (t) => {
  const db = await testDatabase(t);
  const root = mkdtempSync(path.join(tmpdir(), 'chronomap-hosts-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const feed = await startFeed(t);
  // Windows and periods that no run of this test crosses, so that its counts do not depend on the
  // wall clock: a window starts at a multiple of its length since 1970 (an hour's would reset the
  // burst in the middle of the hammer at hh:00), so the burst gets a century-long one (next start
  // 2070), and the level-1 upload and job quotas count for the account's lifetime instead of per
  // UTC day (a day's would reset at midnight between the sixth upload and the direct ones).
  const policy = policyFile(t, (raw) => {
    const CENTURY = 100 * 365 * 86_400;
    (raw.rateLimits as Record<string, unknown>).anonymous = {
      burst: { seconds: CENTURY, limit: ANONYMOUS_BURST },
      daily: { seconds: CENTURY, limit: 100_000 },
    };
    const quotas = raw.quotas as unknown as Record<string, { period: string }>;
    for (const name of ['fileUploadsPerDay', 'importJobsPerDay', 'urlFetchesPerDay']) {
      if (quotas[name]) quotas[name].period = 'total';
    }
  });
  const env = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    SESSION_SECRET: TEST_SESSION_SECRET,
    QUOTAS_CONFIG: policy,
    TRUST_PROXY: 'true',
    GEOCODER: 'off',
    INGEST_BATCH_SIZE: '200',
    INGEST_FETCH_ALLOW_PRIVATE: 'true',
  };
  const apiPorts = [await freePort(), await freePort()];
  const host = (name: string, role: 'api' | 'worker', port?: number) =>
    startHost(t, { name, role, port, root, databaseUrl: db.url, env });
  const started = await Promise.all([
    host('api1', 'api', apiPorts[0]),
    host('api2', 'api', apiPorts[1]),
    host('worker1', 'worker'),
    host('worker2', 'worker'),
  ]);
  const [api1, , worker1, worker2] = started as [HostProcess, HostProcess, HostProcess, HostProcess];
  const lb = await startHaproxy(t, [
    { name: 'api1', port: apiPorts[0] as number },
    { name: 'api2', port: apiPorts[1] as number },
  ]);

  const uploader = await createUser(db, 'uploader', 5);
  const limited = await createUser(db, 'limited', 1);
  const catalogId = await ownedCatalog(db, 'scale-out', uploader.id, true);
  // Uploads need write access: the level-1 user uploads into a catalog of their own.
  const limitedCatalogId = await ownedCatalog(db, 'scale-out-limited', limited.id, false);
  const uploaderAuth = await login(lb.url, uploader.email);
  const limitedAuth = await login(lb.url, limited.email);

  // A schedule due every minute, created through the load balancer.
  const created = await request(`${lb.url}/api/scheduled-ingests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...uploaderAuth },
    body: Buffer.from(
      JSON.stringify({ name: 'Every minute', url: feed.url, schedule: '* * * * *', catalog: catalogId }),
    ),
  });
  t.equal(created.status, 201, created.status === 201 ? 'schedule created' : created.body);
  const scheduleId = (JSON.parse(created.body) as { doc: { id: number } }).doc.id;
  const scheduleCreatedAt = Date.now();

  // Reads as a level-5 user (not rate limited), so the anonymous budget below is the hammer's own.
  const reads = readLoad(
    lb.url,
    uploaderAuth,
    [
      '/api/v1/events?limit=20',
      `/api/v1/events/geo?zoom=3&catalog=${catalogId}`,
      '/api/v1/events/temporal',
      '/api/v1/events/stats',
    ],
    3,
  );

  // Uploads through HAProxy while the reads run: small files, one every 2 s.
  const uploads: Upload[] = [];
  const uploading = (async () => {
    for (let i = 0; i < 6; i++) {
      uploads.push(await uploadCsv(lb.url, uploaderAuth, catalogId, `small${i}`, 300));
      await sleep(2_000);
    }
  })();

  // Quota across processes: a level-1 user may upload 5 files a day, whichever process takes them.
  const quotaUploads: Upload[] = [];
  for (let i = 0; i < 6; i++) {
    quotaUploads.push(await uploadCsv(lb.url, limitedAuth, limitedCatalogId, `quota${i}`, 3));
  }
  // How HAProxy spread those six among the concurrent reads and uploads is its business (a loaded
  // machine once sent all six to one process): each process is then asked directly, and each must
  // refuse the 7th, which only a count shared by both can do.
  const apiUrls = apiPorts.map((port) => `http://127.0.0.1:${port}`);
  const quotaDirect: Upload[] = [];
  for (const [i, url] of apiUrls.entries()) {
    quotaDirect.push(await uploadCsv(url, limitedAuth, limitedCatalogId, `quota-direct${i}`, 3));
  }

  // Rate limit across processes: an anonymous client on another address hammers /api/v1, then asks
  // each process directly (no X-Forwarded-For: the API sees the same client address, 127.0.0.7).
  const hammer: Outcome[] = [];
  for (let i = 0; i < ANONYMOUS_BURST + 10; i++) {
    const { body: _body, ...outcome } = await request(`${lb.url}/api/v1/events?limit=1`, {
      localAddress: '127.0.0.7',
    });
    hammer.push(outcome);
  }
  const hammerDirect: number[] = [];
  for (const url of apiUrls) {
    hammerDirect.push((await request(`${url}/api/v1/events?limit=1`, { localAddress: '127.0.0.7' })).status);
  }

  // SIGKILL one API process mid-load; HAProxy's health checks take it out.
  await sleep(2_000);
  const killedAt = Date.now();
  await api1.kill();
  const downAt = await lb.waitFor('api1', 'DOWN');
  await uploading;

  // A big import; the worker inserting its events is killed in the middle of create-events.
  const big = await uploadCsv(lb.url, uploaderAuth, catalogId, 'big', BIG_IMPORT_ROWS);
  t.equal(big.status, 201, big.status === 201 ? 'big upload accepted' : big.body);
  const Stage = row(Type.Object({ status: Type.String(), rows_processed: Type.Number() }));
  const bigStage = () =>
    db.pool.maybeOne(sql.type(Stage)`
        select s.status, s.rows_processed::int as rows_processed
        from ingest_job_stages s join ingest_jobs j on j.id = s.ingest_job_id
        where j.ingest_file_id = ${big.fileId as number} and s.stage = 'create-events'`);
  const Inserter = row(Type.Object({ application_name: Type.String() }));
  let victim: HostProcess | undefined;
  let rowsAtKill = 0;
  let workerKilledAt = 0;
  for (let i = 0; i < 3000 && !victim; i++) {
    const stage = await bigStage();
    if (stage?.status === 'in_progress' && stage.rows_processed >= 1000) {
      const inserting = await db.pool.any(sql.type(Inserter)`
          select distinct application_name from pg_stat_activity
          where application_name in ('worker1', 'worker2') and state = 'active'
            and query ilike '%insert into events%'`);
      if (inserting.length === 1) {
        victim = inserting[0]?.application_name === 'worker1' ? worker1 : worker2;
        await victim.kill();
        rowsAtKill = (await bigStage())?.rows_processed ?? 0;
        workerKilledAt = Date.now();
      }
    }
    if (!victim) await sleep(20);
  }
  if (!victim) throw new Error('never saw one worker inserting the big import mid-stage');
  const survivor = victim === worker1 ? worker2 : worker1;
  t.ok(
    rowsAtKill < BIG_IMPORT_ROWS,
    `${victim.name} killed with ${rowsAtKill} of ${BIG_IMPORT_ROWS} rows done`,
  );

  // api1 comes back on its port; HAProxy puts it back in rotation.
  const restartedAt = Date.now();
  const restarted = await startHost(t, {
    name: 'api1',
    role: 'api',
    port: apiPorts[0],
    root,
    databaseUrl: db.url,
    env,
  });
  const upAgainAt = await lb.waitFor('api1', 'UP');

  // Wait for the import to complete and for two due minutes of the schedule to be imported.
  const FileStatus = row(Type.Object({ status: Type.String() }));
  const fileStatus = (id: number) =>
    db.pool.oneFirst(sql.type(FileStatus)`select status from ingest_files where id = ${id}`);
  const importedRuns = () =>
    db.pool.oneFirst(sql.type(Count)`
        select count(*)::int as n from scheduled_ingest_runs
        where scheduled_ingest_id = ${scheduleId} and status = 'imported'`);
  let resumedAt = 0;
  let bigDoneAt = 0;
  const deadline = Date.now() + 3 * MINUTE;
  while (Date.now() < deadline) {
    if (!resumedAt && ((await bigStage())?.rows_processed ?? 0) > rowsAtKill) resumedAt = Date.now();
    const bigDone = ['completed', 'failed', 'partial'].includes(await fileStatus(big.fileId as number));
    if (bigDone && !bigDoneAt) bigDoneAt = Date.now();
    if (bigDone && (await importedRuns()) >= 2) break;
    await sleep(1_000);
  }
  await db.pool.query(sql.unsafe`update scheduled_ingests set enabled = false where id = ${scheduleId}`);
  const outcomes = await reads.stop();
  const stoppedAt = Date.now();

  // --- the imports: each accepted upload's events created exactly once ---
  // An upload in flight on api1 when it was killed cannot be retried by HAProxy (its body was
  // sent, the process may have recorded it): the client sees the failure. Any other must succeed.
  const accepted = uploads.filter((u) => u.status === 201);
  const lost = uploads.filter((u) => u.status !== 201);
  t.comment(
    `uploads: ${uploads.length} sent, ${lost.length} failed: ` +
      lost
        .map(
          (u) =>
            `${u.status} ${u.error ?? u.body.slice(0, 120)}, sent ${u.sentAt - killedAt} ms and ended ` +
            `${u.endedAt - killedAt} ms after the SIGKILL`,
        )
        .join('; '),
  );
  t.ok(lost.length <= 1, 'at most the one upload in flight at the kill failed');
  for (const upload of lost) {
    t.ok(upload.sentAt < downAt && upload.endedAt >= killedAt, 'it was in flight when api1 was killed');
    // The process may have committed the file before it died: then it is imported like any other.
    const Recorded = row(Type.Object({ id: Type.Number(), dataset_id: Type.Number() }));
    const recorded = await db.pool.any(sql.type(Recorded)`
        select f.id, j.dataset_id from ingest_files f join ingest_jobs j on j.ingest_file_id = f.id
        where f.original_name = ${upload.name}`);
    t.ok(recorded.length <= 1, `${upload.name} recorded ${recorded.length} time(s)`);
    if (recorded[0]) accepted.push({ ...upload, fileId: recorded[0].id, datasetId: recorded[0].dataset_id });
  }
  const expectedAccepted = [...accepted, ...quotaUploads.filter((u) => u.status === 201), big];
  for (const upload of expectedAccepted) {
    while (!['completed', 'failed', 'partial'].includes(await fileStatus(upload.fileId as number)))
      await sleep(500);
  }
  for (const upload of expectedAccepted) {
    const events = await db.pool.oneFirst(sql.type(Count)`
        select count(*)::int as n from events where dataset_id = ${upload.datasetId as number}`);
    const jobs = await db.pool.oneFirst(sql.type(Count)`
        select count(*)::int as n from ingest_jobs where ingest_file_id = ${upload.fileId as number}`);
    t.same(
      { status: await fileStatus(upload.fileId as number), events, jobs },
      { status: 'completed', events: upload.rows, jobs: 1 },
      `upload ${upload.fileId} (${upload.rows} rows, taken by ${upload.servedBy}): every event once`,
    );
  }
  t.equal((await bigStage())?.rows_processed, BIG_IMPORT_ROWS, `${survivor.name} finished the big import`);
  t.comment(
    `big import: ${victim.name} SIGKILLed at ${rowsAtKill} rows; ${survivor.name} resumed within ` +
      `${Math.round((resumedAt - workerKilledAt) / 1000)} s (1 s polls) and completed ` +
      `${Math.round((bigDoneAt - workerKilledAt) / 1000)} s after the kill`,
  );

  // --- the schedule: one run per due minute across both workers, each fetched and imported once ---
  const Run = row(Type.Object({ due_at: Type.String(), status: Type.String() }));
  const runs = await db.pool.any(sql.type(Run)`
      select due_at::text as due_at, status from scheduled_ingest_runs
      where scheduled_ingest_id = ${scheduleId} order by due_at`);
  const due = runs.map((r) => Date.parse(r.due_at));
  t.ok(
    runs.length >= 2,
    `${runs.length} scheduled runs in ${Math.round((stoppedAt - scheduleCreatedAt) / 1000)} s`,
  );
  // A SIGKILLed worker's pass fails on its missed heartbeats and the next one runs; a minute in which
  // no manager pass ran has no run (test/helpers/schedule-passes.ts).
  await assertEachMinuteRunOnce(t, db.pool, due);
  t.same([...new Set(runs.map((r) => r.status))], ['imported'], 'every run imported');
  t.equal(feed.requests(), runs.length, 'the feed was fetched once per run');

  // --- the API process killed mid-load ---
  const readFailures = outcomes.filter(failed);
  const afterDown = readFailures.filter((o) => o.sentAt >= downAt);
  const servedBy = (from: number, to: number) =>
    new Set(outcomes.filter((o) => o.sentAt >= from && o.endedAt <= to && !failed(o)).map((o) => o.servedBy));
  t.comment(
    `reads: ${outcomes.length} requests, ${readFailures.length} failed (${afterDown.length} after HAProxy ` +
      `marked api1 DOWN ${downAt - killedAt} ms after the SIGKILL); api1 UP again ${upAgainAt - downAt} ms later`,
  );
  t.same(readFailures, [], 'no read failed, before or after HAProxy marked the killed process down');
  t.same([...servedBy(downAt, restartedAt)], ['api2'], 'while api1 was dead every read went to api2');
  // Which process HAProxy sends each read to after the restart is its business: the restarted one
  // is shown back in rotation (lb.waitFor saw it marked UP) and answering reads, asked directly.
  const direct = await request(`${apiUrls[0]}/api/v1/events?limit=1`, { headers: uploaderAuth });
  t.equal(direct.status, 200, 'the restarted api1 answers reads');
  t.ok(restarted.child.exitCode === null, 'the restarted api1 is running');

  // --- rate limit and quota across processes ---
  const ok = hammer.filter((o) => o.status === 200);
  const limitedAnswers = hammer.filter((o) => o.status === 429);
  t.equal(ok.length, ANONYMOUS_BURST, `exactly ${ANONYMOUS_BURST} anonymous requests allowed`);
  t.equal(limitedAnswers.length, 10, 'then 429 for the rest');
  t.same(hammerDirect, [429, 429], 'then each process, asked directly, answers 429: the count is shared');
  t.same(
    quotaUploads.map((u) => u.status),
    [201, 201, 201, 201, 201, 403],
    'level 1: 5 uploads across both processes, the 6th refused',
  );
  t.same(
    quotaDirect.map((u) => u.status),
    [403, 403],
    'then each process, asked directly, refuses the next upload: the quota is shared',
  );
  t.match(JSON.parse(quotaUploads[5]?.body ?? '{}'), { code: 'QUOTA_EXCEEDED' });
});
