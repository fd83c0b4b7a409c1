import t from 'tap';
import { loadAccessPolicy } from '../../../src/adapters/config/access-policy.ts';
import { postgresQuotas } from '../../../src/adapters/postgres/accounts/quotas.ts';
import type { QuotaName } from '../../../src/domain/accounts/quotas.ts';
import type { TestDatabase } from '../../helpers/database.ts';
import { accountsApp, policyFile } from '../../helpers/accounts.ts';
import type { Test } from 'tap';

function service(t: Test, db: TestDatabase, now: () => Date, change?: Parameters<typeof policyFile>[1]) {
  const quotas = postgresQuotas(db.pool, loadAccessPolicy(policyFile(t, change)), { now });
  const used = async (userId: number, quota: QuotaName) =>
    (await quotas.status(userId)).find((s) => s.quota === quota)?.used;
  return {
    ...quotas,
    used,
    /** Takes `amount` of one quota and answers the usage after it. */
    async consume(userId: number, quota: QuotaName, amount = 1) {
      await quotas.take(userId, [{ quota, amount }]);
      return {
        used: await used(userId, quota),
        resetTime: (await quotas.status(userId)).find((s) => s.quota === quota)?.resetTime,
      };
    },
  };
}

t.test('GET /api/quotas, current shape', async (t) => {
  const { createUser, login, as } = await accountsApp(t);
  const user = await createUser({ trustLevel: 3 });
  t.equal((await as(null)('GET', '/api/quotas')).statusCode, 401);
  // USER_ONLY: who is calling is decided before the query is validated, as on every user-only route.
  t.equal((await as(null)('GET', '/api/quotas?variant=bogus')).statusCode, 401);
  const response = await as(await login(user))('GET', '/api/quotas');
  t.equal(response.statusCode, 200);
  t.same(response.json(), {
    quotas: {
      fileUploadsPerDay: { used: 0, limit: 50, remaining: 50 },
      urlFetchesPerDay: { used: 0, limit: 50, remaining: 50 },
      importJobsPerDay: { used: 0, limit: 100, remaining: 100 },
      activeSchedules: { used: 0, limit: 10, remaining: 10 },
      totalEvents: { used: 0, limit: 2000000, remaining: 2000000 },
      eventsPerImport: { used: 0, limit: 250000, remaining: 250000 },
      draftStorageMB: { used: 0, limit: 500, remaining: 500 },
      scraperRepos: { used: 0, limit: 3, remaining: 3 },
      scraperRunsPerDay: { used: 0, limit: 10, remaining: 10 },
      maxFileSizeMB: { limit: 100 },
    },
  });
  t.notOk(response.headers['x-ratelimit-limit'], 'the current shape has no rate-limit headers');
});

t.test('GET /api/quotas?variant=earlier', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t, {
    policy: (p) => {
      p.quotas.importJobsPerDay.levels[1] = 4;
    },
  });
  const user = await createUser({ trustLevel: 1 });
  await service(t, db, () => new Date()).consume(user.id, 'importJobsPerDay', 3);
  const response = await as(await login(user))('GET', '/api/quotas?variant=earlier');
  t.equal(response.statusCode, 200, response.body);
  const body = response.json();
  t.same(body.user, { id: user.id, email: user.email, role: 'user', trustLevel: '1' });
  const midnight = body.summary.nextResetTime;
  t.match(midnight, /T00:00:00\.000Z$/, 'the next midnight UTC');
  t.same(body.quotas.importJobsPerDay, {
    used: 3,
    limit: 4,
    remaining: 1,
    allowed: true,
    resetTime: midnight,
    description: 'Import jobs started per day',
  });
  t.match(body.quotas.totalEvents, { resetTime: null, allowed: true });
  t.match(body.quotas.scraperRepos, { limit: 0, remaining: 0, allowed: false }, 'no scrapers below level 3');
  t.match(body.quotas.maxFileSizeMB, { limit: 25, allowed: true });
  t.same(body.summary, { hasUnlimitedAccess: false, nextResetTime: midnight });
  t.equal(
    response.headers['x-ratelimit-limit'],
    '4',
    'the tightest daily quota the user can spend: import jobs (scraper runs, closed at level 1, are no rate)',
  );
  t.equal(response.headers['x-ratelimit-remaining'], '1');
  t.equal(response.headers['x-ratelimit-reset'], midnight);

  const admin = await createUser({ role: 'admin' });
  const unlimited = (await as(await login(admin))('GET', '/api/quotas?variant=earlier')).json();
  t.equal(unlimited.summary.hasUnlimitedAccess, true);
  t.match(unlimited.quotas.fileUploadsPerDay, { limit: -1, remaining: -1, allowed: true });
  t.equal((await as(await login(admin))('GET', '/api/quotas?variant=later')).statusCode, 400);
});

t.test('two requests never both take the last unit', async (t) => {
  const { db, createUser } = await accountsApp(t);
  const user = await createUser({ trustLevel: 2 });
  for (let round = 0; round < 3; round += 1) {
    const day = new Date(Date.UTC(2030, 0, 1 + round, 12));
    const onDay = service(
      t,
      db,
      () => day,
      (p) => {
        p.quotas.importJobsPerDay.levels[2] = 5;
      },
    );
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () => onDay.take(user.id, [{ quota: 'importJobsPerDay', amount: 1 }])),
    );
    const taken = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    t.equal(taken.length, 5, `round ${round}: exactly the limit is taken`);
    t.ok(
      refused.every((r) => (r as PromiseRejectedResult).reason.code === 'QUOTA_EXCEEDED'),
      'the rest are refused with QUOTA_EXCEEDED',
    );
    t.equal(await onDay.used(user.id, 'importJobsPerDay'), 5, 'the stored usage is exactly the limit');
  }
});

t.test('many concurrent event creations stop exactly at totalEvents', async (t) => {
  const { createUser, login, as } = await accountsApp(t, {
    policy: (p) => {
      p.quotas.totalEvents.levels[1] = 3;
    },
  });
  const user = await createUser();
  const api = as(await login(user));
  const catalog = (await api('POST', '/api/catalogs', { slug: 'c', title: 'C' })).json().doc.id;
  const dataset = (await api('POST', '/api/datasets', { catalog, slug: 'd', title: 'D' })).json().doc.id;
  const responses = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      api('POST', '/api/events', { dataset, uniqueId: `e${i}`, eventTimestamp: '2024-01-01T00:00:00Z' }),
    ),
  );
  const statuses = responses.map((r) => r.statusCode).sort();
  t.same(statuses, [201, 201, 201, ...Array(9).fill(403)]);
  const refused = responses.find((r) => r.statusCode === 403);
  t.match(refused?.json(), { error: 'Forbidden', code: 'QUOTA_EXCEEDED', message: /totalEvents/ });
  t.match((await api('GET', '/api/quotas')).json().quotas.totalEvents, { used: 3, limit: 3, remaining: 0 });
});

t.test('daily quotas reset at midnight UTC; total quotas do not; release gives back', async (t) => {
  const { db, createUser } = await accountsApp(t);
  const user = await createUser({ trustLevel: 3 });
  let now = new Date('2030-06-01T23:59:59.999Z');
  const quotas = service(t, db, () => now);
  for (let i = 0; i < 10; i += 1) await quotas.consume(user.id, 'scraperRunsPerDay');
  await t.rejects(quotas.consume(user.id, 'scraperRunsPerDay'), { code: 'QUOTA_EXCEEDED' });
  for (let i = 0; i < 3; i += 1) await quotas.consume(user.id, 'scraperRepos');
  await t.rejects(quotas.consume(user.id, 'scraperRepos'), { code: 'QUOTA_EXCEEDED' });

  now = new Date('2030-06-02T00:00:00.000Z');
  const runs = await quotas.consume(user.id, 'scraperRunsPerDay');
  t.equal(runs.used, 1, 'a new day starts from zero');
  t.same(runs.resetTime, new Date('2030-06-03T00:00:00.000Z'));
  await t.rejects(quotas.consume(user.id, 'scraperRepos'), { code: 'QUOTA_EXCEEDED' }, 'repos stay counted');
  await quotas.give(user.id, [{ quota: 'scraperRepos', amount: 1 }]);
  t.equal((await quotas.consume(user.id, 'scraperRepos')).used, 3, 'a deleted repo frees a place');

  await t.rejects(quotas.check(user.id, [{ quota: 'maxFileSizeMB', amount: 101 }]), {
    code: 'QUOTA_EXCEEDED',
  });
  await quotas.check(user.id, [{ quota: 'maxFileSizeMB', amount: 100 }]);
  await t.rejects(
    quotas.consume(user.id, 'scraperRunsPerDay', 11),
    { code: 'QUOTA_EXCEEDED' },
    'more than the limit at once',
  );

  const admin = await createUser({ role: 'admin', trustLevel: 0 });
  for (let i = 0; i < 20; i += 1) await quotas.consume(admin.id, 'scraperRunsPerDay');
  const status = await quotas.status(admin.id);
  t.match(
    status.find((s: { quota: string }) => s.quota === 'scraperRunsPerDay'),
    { used: 20, limit: null, remaining: null },
    'admins are unlimited',
  );
});

t.test('a request over several quotas takes all or none of them', async (t) => {
  const { db, createUser } = await accountsApp(t);
  const user = await createUser({ trustLevel: 1 });
  const quotas = service(
    t,
    db,
    () => new Date('2030-06-01T12:00:00Z'),
    (p) => {
      p.quotas.importJobsPerDay.levels[1] = 2;
    },
  );
  await quotas.take(user.id, [{ quota: 'importJobsPerDay', amount: 2 }]);
  await t.rejects(
    quotas.take(user.id, [
      { quota: 'fileUploadsPerDay', amount: 1 },
      { quota: 'importJobsPerDay', amount: 1 },
    ]),
    { code: 'QUOTA_EXCEEDED', quota: 'importJobsPerDay' },
  );
  t.equal(await quotas.used(user.id, 'fileUploadsPerDay'), 0, 'the refused request took no upload');
  await t.rejects(quotas.check(user.id, [{ quota: 'importJobsPerDay', amount: 1 }]), {
    code: 'QUOTA_EXCEEDED',
  });
  t.equal(await quotas.used(user.id, 'importJobsPerDay'), 2, 'a check takes nothing');
});
