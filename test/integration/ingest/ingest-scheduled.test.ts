import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { cronerSchedule } from '../../../src/adapters/jobs/croner-schedule.ts';
import { pgBossScheduleQueue } from '../../../src/adapters/jobs/schedule-workers.ts';
import { row, sql, type DatabasePool } from '../../../src/adapters/postgres/database.ts';
import type { PgBoss } from 'pg-boss';
import { postgresCollectionRepository } from '../../../src/adapters/postgres/collections/collection-repository.ts';
import { postgresIngestStore } from '../../../src/adapters/postgres/ingest/ingest-store.ts';
import { postgresScheduleStore } from '../../../src/adapters/postgres/ingest/schedule-store.ts';
import { unlimitedQuotas } from '../../helpers/quotas.ts';
import { webhookTokens } from '../../../src/adapters/security/webhook-tokens.ts';
import { runScheduleManager } from '../../../src/application/ingest/scheduled-ingests.ts';
import { authHeaders, countEvents, ingestApp, signIn, waitForFile } from '../../fixtures/ingest/client.ts';
import { ensureCatalog, ensureDataset } from '../../helpers/collections.ts';

// Scheduled URL imports against a real HTTP server on loopback (allowed by the test configuration's
// explicit flag): the schedule manager queues each due time once however many managers run, the
// webhook token works until the schedule is disabled, and a failed run does not block the next.

const CSV =
  'id,time,latitude,longitude,title\n1,2026-01-01T00:00:00Z,52.5,13.4,a\n2,2026-01-02T00:00:00Z,48.8,2.3,b\n';

async function feed(t: Test) {
  let status = 200;
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    requests.push(request.url ?? '');
    if (status !== 200) response.writeHead(status).end('nope');
    else response.writeHead(200, { 'content-type': 'text/csv' }).end(CSV);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events.csv`,
    requests,
    setStatus: (s: number) => {
      status = s;
    },
  };
}

const setupApp = (t: Test) =>
  ingestApp(t, { fetch: { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateAddresses: true } });

function managerDeps(pool: DatabasePool, boss: PgBoss) {
  return {
    schedules: postgresScheduleStore(pool),
    store: postgresIngestStore(pool),
    cron: cronerSchedule,
    tokens: webhookTokens,
    queue: pgBossScheduleQueue(boss),
    quotas: unlimitedQuotas,
    clock: systemClock,
    hierarchy: postgresCollectionRepository(pool),
  };
}

/** A feed server, the service, and an import of the feed: by cron, or else by webhook and by hand only. */
async function withSchedule(t: Test, name: string, schedule?: string) {
  const source = await feed(t);
  const setup = await setupApp(t);
  const response = await setup.app.inject({
    method: 'POST',
    url: '/api/scheduled-ingests',
    payload: { name, url: source.url, catalog: setup.catalogId, ...(schedule ? { schedule } : {}) },
    headers: authHeaders(setup.app),
  });
  t.equal(response.statusCode, 201, response.body);
  return { ...setup, source, saved: response.json() as Saved };
}

type Saved = { doc: { id: number; nextRunAt: string | null; dataset: number | null }; webhookToken?: string };
const Runs = row(
  Type.Object({
    status: Type.String(),
    triggered_by: Type.String(),
    ingest_file_id: Type.Union([Type.Number(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
  }),
);

t.test(
  'a due schedule is queued exactly once by concurrent managers and imported as an automated file',
  async (t) => {
    const { source, app, db, services, saved } = await withSchedule(t, 'Feed', '*/5 * * * *');
    t.match(saved.webhookToken, /^[0-9a-f]{64}$/);
    const next = Date.parse(saved.doc.nextRunAt ?? '');
    t.equal(new Date(next).getUTCMinutes() % 5, 0, 'the next run is on a five-minute boundary (UTC)');
    t.ok(next > Date.now());

    // As if the schedule had been created before its latest occurrence: that occurrence is due.
    const schedules = postgresScheduleStore(db.pool);
    const due = cronerSchedule.previous('*/5 * * * *', new Date()) as Date;
    await schedules.update(saved.doc.id, { nextRunAt: due.toISOString() });
    const deps = managerDeps(db.pool, services.boss);
    const results = await Promise.all([1, 2, 3, 4].map(() => runScheduleManager(deps)));
    t.equal(
      results.reduce((sum, r) => sum + r.queued, 0),
      1,
      'four managers at once queue the due time once',
    );
    const after = await schedules.get(saved.doc.id);
    t.ok(Date.parse(after?.nextRunAt ?? '') > Date.now(), 'the next run time moved on');

    let runs: readonly { status: string; ingest_file_id: number | null }[] = [];
    for (let i = 0; i < 300 && !(runs[0]?.status === 'imported'); i++) {
      runs = await db.pool.any(
        sql.type(Runs)`select status, triggered_by, ingest_file_id, error from scheduled_ingest_runs`,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.match(runs, [{ status: 'imported', triggered_by: 'schedule' }]);
    const progress = await waitForFile(app, runs[0]?.ingest_file_id as number);
    t.equal(progress.status, 'completed');
    t.same(
      progress.jobs[0]?.stages.find((s) => s.name === 'needs-review')?.status,
      'completed',
      'an automated import goes through needs-review (nothing to review here)',
    );
    const schedule = (
      await app.inject({
        method: 'GET',
        url: `/api/scheduled-imports/${saved.doc.id}`,
        headers: authHeaders(app),
      })
    ).json() as { dataset: number; lastStatus: string };
    t.equal(schedule.lastStatus, 'imported');
    t.equal(
      await countEvents(db.pool, schedule.dataset),
      2,
      'the first run created the dataset the schedule keeps',
    );
    t.equal(source.requests.length, 1);
  },
);

t.test(
  'webhook: 200 with the queued run, 404 unknown or disabled, a new token after re-enabling',
  async (t) => {
    const { app, db, saved } = await withSchedule(t, 'Hook');
    const token = saved.webhookToken as string;
    const stored = await db.pool.oneFirst(
      sql.type(row(Type.Object({ h: Type.String() })))`select webhook_token_hash as h from scheduled_ingests`,
    );
    t.not(stored, token, 'only a hash of the token is stored');

    const fired = await app.inject({ method: 'POST', url: `/api/webhooks/trigger/${token}` });
    t.equal(fired.statusCode, 200, fired.body);
    t.match(fired.json(), { success: true, run: { triggeredBy: 'webhook', status: 'queued' } });

    t.equal(
      (await app.inject({ method: 'POST', url: `/api/webhooks/trigger/${'0'.repeat(64)}` })).statusCode,
      404,
    );
    t.equal((await app.inject({ method: 'POST', url: '/api/webhooks/trigger/short' })).statusCode, 404);

    await app.inject({
      method: 'PATCH',
      url: `/api/scheduled-ingests/${saved.doc.id}`,
      payload: { enabled: false },
      headers: authHeaders(app),
    });
    const disabled = await app.inject({ method: 'POST', url: `/api/webhooks/trigger/${token}` });
    t.equal(disabled.statusCode, 404);
    t.same(disabled.json(), {
      error: 'Not Found',
      message: 'unknown or disabled webhook token',
      code: 'WEBHOOK_NOT_FOUND',
    });

    const enabled = (
      await app.inject({
        method: 'PATCH',
        url: `/api/scheduled-ingests/${saved.doc.id}`,
        payload: { enabled: true },
        headers: authHeaders(app),
      })
    ).json() as Saved;
    t.match(enabled.webhookToken, /^[0-9a-f]{64}$/);
    t.not(enabled.webhookToken, token, 'rotated');
    t.equal(
      (await app.inject({ method: 'POST', url: `/api/webhooks/trigger/${token}` })).statusCode,
      404,
      'the old token stays dead',
    );
    t.equal(
      (await app.inject({ method: 'POST', url: `/api/webhooks/trigger/${enabled.webhookToken}` })).statusCode,
      200,
    );
  },
);

t.test(
  'a manager that died between claiming a run and moving the next run time on: the next pass runs the minute now due',
  async (t) => {
    const { db, services, saved } = await withSchedule(t, 'Every minute', '* * * * *');
    const id = saved.doc.id;
    // The dead manager's pass: it claimed the run of the minute before and never moved next_run_at.
    const deps = managerDeps(db.pool, services.boss);
    const current = cronerSchedule.previous('* * * * *', new Date()) as Date;
    const before = new Date(current.getTime() - 60_000);
    t.ok(await deps.schedules.claimRun(id, before, 'schedule'), 'the dead pass claimed the minute before');
    await deps.schedules.update(id, { nextRunAt: before.toISOString() });

    const { queued } = await runScheduleManager(deps);
    t.equal(queued, 1, 'the next pass queues a run');
    const DueAt = row(Type.Object({ due_at: Type.String() }));
    const dueTimes = (
      await db.pool.any(
        sql.type(DueAt)`select due_at::text as due_at from scheduled_ingest_runs
          where scheduled_ingest_id = ${id} order by due_at`,
      )
    ).map((r) => Date.parse(r.due_at));
    t.equal(dueTimes.length, 2);
    t.equal(dueTimes[0], before.getTime(), 'the claimed minute was not run twice');
    // The minute now due when the pass ran (the clock may have moved on to the next one meanwhile).
    t.ok((dueTimes[1] ?? 0) >= current.getTime(), 'the pass ran the minute due now, not skipped it');
    const after = await deps.schedules.get(id);
    t.ok(Date.parse(after?.nextRunAt ?? '') > (dueTimes[1] ?? 0), 'the next run time moved past it');
  },
);

t.test('a failed run is recorded and does not block the next one', async (t) => {
  const { source, app, db, saved } = await withSchedule(t, 'Flaky');
  source.setStatus(404);
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: `/api/scheduled-ingests/${saved.doc.id}/trigger`,
        headers: authHeaders(app),
      })
    ).statusCode,
    202,
  );
  const waitRuns = async (n: number, done: (r: readonly { status: string }[]) => boolean) => {
    for (let i = 0; i < 300; i++) {
      const runs = await db.pool.any(
        sql.type(
          Runs,
        )`select status, triggered_by, ingest_file_id, error from scheduled_ingest_runs order by id`,
      );
      if (runs.length === n && done(runs)) return runs;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('runs did not settle');
  };
  const failed = await waitRuns(1, (r) => r[0]?.status === 'failed');
  t.match(failed[0], { status: 'failed', error: /answered 404.*permanent/ });

  source.setStatus(200);
  await new Promise((resolve) => setTimeout(resolve, 5));
  t.equal(
    (
      await app.inject({
        method: 'POST',
        url: `/api/scheduled-ingests/${saved.doc.id}/trigger`,
        headers: authHeaders(app),
      })
    ).statusCode,
    202,
  );
  const runs = await waitRuns(2, (r) => r[1]?.status === 'imported');
  t.match(runs, [{ status: 'failed' }, { status: 'imported', triggered_by: 'manual' }]);
});

t.test('bad schedules and URLs are refused with the field named', async (t) => {
  const { app, catalogId } = await setupApp(t);
  const post = (payload: object) =>
    app.inject({
      method: 'POST',
      url: '/api/scheduled-ingests',
      payload: { name: 'x', catalog: catalogId, ...payload },
      headers: authHeaders(app),
    });
  const sixFields = await post({ url: 'https://example.org/a.csv', schedule: '0 */5 * * * *' });
  t.equal(sixFields.statusCode, 400);
  t.match(sixFields.json(), { message: /five fields/, details: 'field: schedule' });
  const nonsense = await post({ url: 'https://example.org/a.csv', schedule: '99 * * * *' });
  t.equal(nonsense.statusCode, 400);
  const ftp = await post({ url: 'ftp://example.org/a.csv' });
  t.match(ftp.json(), { details: 'field: url' });
});

t.test('PATCH edits URL, settings and target, all or nothing, for the owner and admins only', async (t) => {
  const { app, db, catalogId, saved } = await withSchedule(t, 'Editable');
  const url = `/api/scheduled-ingests/${saved.doc.id}`;
  const dataset = await ensureDataset(db.pool, catalogId, {
    slug: 'edit-target',
    title: 'T',
    isPublic: true,
  });
  const stranger = await signIn(app, db.pool);
  const admin = await signIn(app, db.pool, { role: 'admin' });
  const theirs = await ensureCatalog(db.pool, { slug: 'strangers', title: 'S', isPublic: false });
  await db.pool.query(sql.unsafe`update catalogs set created_by = ${stranger.id} where id = ${theirs}`);
  const patch = (payload: object, headers: Record<string, string> = authHeaders(app)) =>
    app.inject({ method: 'PATCH', url, payload, headers });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const stored = async () =>
    (await app.inject({ method: 'GET', url, headers: authHeaders(app) })).json() as Record<string, unknown>;

  const edited = await patch({
    url: 'https://example.org/new.csv',
    settings: { fieldMapping: { timestamp: 'when' }, duplicateHandling: 'update' },
    dataset,
  });
  t.equal(edited.statusCode, 200, edited.body);
  t.match(edited.json(), {
    doc: {
      url: 'https://example.org/new.csv',
      dataset,
      catalog: catalogId,
      settings: { fieldMapping: { timestamp: 'when' }, duplicateHandling: 'update' },
    },
  });

  t.equal((await patch({ url: 'https://example.org/x.csv' }, {})).statusCode, 401, 'anonymous');
  const foreign = await patch({ url: 'https://example.org/x.csv' }, bearer(stranger.token));
  t.equal(foreign.statusCode, 404, 'not theirs is not found');
  t.match(foreign.json(), { code: 'SCHEDULE_NOT_FOUND' });
  const byAdmin = await patch({ url: 'https://example.org/admin.csv' }, bearer(admin.token));
  t.equal(byAdmin.statusCode, 200, byAdmin.body);
  t.equal((await stored()).url, 'https://example.org/admin.csv');
  await patch({ url: 'https://example.org/new.csv' });
  const before = await stored();

  const refused: [object, RegExp | string][] = [
    [{ url: 'ftp://example.org/a.csv', name: 'renamed' }, 'field: url'],
    [{ url: 'https://user:secret@example.org/a.csv' }, 'field: url'],
    [{ url: 'not a url', enabled: false }, 'field: url'],
    [{ settings: { unknown: 1 }, url: 'https://example.org/changed.csv' }, 'field: settings.unknown'],
    [{ settings: { duplicateHandling: 'merge' } }, 'field: settings.duplicateHandling'],
    [{ settings: [] }, /settings/],
    [{ dataset: 999999999, url: 'https://example.org/changed.csv' }, /DATASET_NOT_IN_CATALOG|999999999/],
  ];
  for (const [payload, details] of refused) {
    const response = await patch(payload);
    t.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
    t.match(response.json(), { error: 'Bad Request', message: String }, 'the spec error body');
    t.match(JSON.stringify(response.json()), details);
  }
  const intoTheirs = await patch({ catalog: theirs, url: 'https://example.org/changed.csv' });
  t.equal(intoTheirs.statusCode, 404, 'a catalog the caller cannot see is not found');
  t.same(await stored(), before, 'nothing changed by any refused edit');
});
