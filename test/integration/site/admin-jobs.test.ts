import t, { type Test } from 'tap';
import { INGEST_REFRESH_COUNTS_QUEUE } from '../../../src/adapters/jobs/job-queue.ts';
import { TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { signIn } from '../../fixtures/ingest/client.ts';

// The admin views of background work against a real pg-boss: the schedule manager's status and a
// pass queued now, every queue's counts with its oldest waiting job, and deferred jobs run now
// (refused in production). Admins only: anonymous 401, everyone else 403.

async function setup(t: Test, options: { workers: boolean; production?: boolean }) {
  const { app, db, services } = await testApp(t, {
    workers: options.workers,
    ...(options.production ? { config: { nodeEnv: 'production', sessionSecret: TEST_SESSION_SECRET } } : {}),
  });
  const user = await signIn(app, db.pool);
  const admin = await signIn(app, db.pool, { role: 'admin' });
  const call = (method: 'GET' | 'POST', url: string, token: string | null) =>
    app.inject({ method, url, headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { app, db, services, user, admin, call };
}

const ROUTES = [
  ['GET', '/api/admin/schedule-service'],
  ['POST', '/api/admin/schedule-service'],
  ['GET', '/api/admin/jobs'],
  ['POST', '/api/admin/jobs/run'],
] as const;

t.test('admins only', async (t) => {
  const { user, call } = await setup(t, { workers: false });
  for (const [method, url] of ROUTES) {
    t.equal((await call(method, url, null)).statusCode, 401, `${method} ${url} anonymous`);
    t.equal((await call(method, url, user.token)).statusCode, 403, `${method} ${url} as a user`);
  }
});

t.test('the schedule manager: registered, next and last run, a pass queued now', async (t) => {
  const { admin, call } = await setup(t, { workers: true });
  const status = await call('GET', '/api/admin/schedule-service', admin.token);
  t.equal(status.statusCode, 200, status.body);
  t.match(status.json(), { queue: 'schedule-manager-job', enabled: true, cron: '* * * * *' });
  const next = Date.parse(status.json().nextRunAt);
  t.ok(next > Date.now() && next <= Date.now() + 60_000, 'the next minute');
  t.equal(new Date(next).getUTCSeconds(), 0);

  const queued = await call('POST', '/api/admin/schedule-service', admin.token);
  t.equal(queued.statusCode, 202, queued.body);
  let lastRun = null;
  for (let i = 0; i < 60 && !lastRun?.completedAt; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    lastRun = (await call('GET', '/api/admin/schedule-service', admin.token)).json().lastRun;
  }
  t.match(lastRun, { state: 'completed', startedAt: String }, 'a worker ran the queued pass');
});

t.test('queue counts with the oldest waiting job; deferred jobs run now', async (t) => {
  const { admin, services, call } = await setup(t, { workers: false });
  await services.boss.createQueue(INGEST_REFRESH_COUNTS_QUEUE);
  const sentAt = Date.now();
  await services.boss.send(INGEST_REFRESH_COUNTS_QUEUE, { datasetId: 1 }, { startAfter: 3600 });
  const jobs = await call('GET', '/api/admin/jobs', admin.token);
  const askedAt = Date.now();
  t.equal(jobs.statusCode, 200, jobs.body);
  const names = jobs.json().queues.map((q: { name: string }) => q.name);
  t.ok(names.includes('ingest-process') && names.includes('schedule-manager-job'), 'every queue');
  const refresh = jobs.json().queues.find((q: { name: string }) => q.name === INGEST_REFRESH_COUNTS_QUEUE);
  t.match(refresh, { queued: 1, deferred: 1, ready: 0, oldestQueuedAt: String });
  // The age counts from when the job was sent (not from its start-after, an hour ahead): at most
  // the time between sending it and the answer, whatever that time was (a second for rounding).
  t.ok(
    refresh.oldestAgeSeconds >= 0 && refresh.oldestAgeSeconds <= (askedAt - sentAt) / 1000 + 1,
    `oldest waiting ${refresh.oldestAgeSeconds} s, sent ${askedAt - sentAt} ms before the answer`,
  );

  const run = await call('POST', '/api/admin/jobs/run', admin.token);
  t.equal(run.statusCode, 200, run.body);
  t.same(run.json(), { started: 1 });
  const after = (await call('GET', '/api/admin/jobs', admin.token)).json();
  t.match(
    after.queues.find((q: { name: string }) => q.name === INGEST_REFRESH_COUNTS_QUEUE),
    { queued: 1, deferred: 0, ready: 1 },
  );
});

t.test('running jobs ahead of time is refused in production', async (t) => {
  const { admin, call } = await setup(t, { workers: false, production: true });
  const refused = await call('POST', '/api/admin/jobs/run', admin.token);
  t.equal(refused.statusCode, 403, refused.body);
  t.equal(refused.json().code, 'NOT_IN_PRODUCTION');
});
