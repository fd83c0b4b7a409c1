import t from 'tap';
import { checkHealth } from '../../../../src/application/site/check-health.ts';
import { SCRAPERS_WITHOUT_RUNNER } from '../../../../src/domain/site/health.ts';
import type {
  DatabaseStatus,
  EnvironmentStatus,
  RunnerStatus,
} from '../../../../src/ports/site/system-status.ts';

// Hand-written fakes of the ports: the use case's own logic, without a database.
function fakeDatabase(overrides: Partial<DatabaseStatus> = {}): DatabaseStatus {
  return {
    ping: async () => ({ status: 'ok' }),
    postgis: async () => ({ status: 'ok', version: '3.3.2' }),
    pendingMigrations: async () => [],
    ...overrides,
  };
}
const environment: EnvironmentStatus = { missingVariables: () => [] };

t.test('all ok gives a healthy report without a runner field', async (t) => {
  const result = await checkHealth({ database: fakeDatabase(), environment });
  t.equal(result.healthy, true);
  t.same(result.report, {
    database: { status: 'ok' },
    migrations: { status: 'ok' },
    postgis: { status: 'ok', version: '3.3.2' },
    environment: { status: 'ok' },
  });
  t.notOk('runner' in result.report);
});

t.test('pending migrations are named and stay a warning', async (t) => {
  const result = await checkHealth({
    database: fakeDatabase({ pendingMigrations: async () => ['0002_more.sql'] }),
    environment,
  });
  t.equal(result.healthy, true);
  t.same(result.report.migrations, { status: 'pending', pending: ['0002_more.sql'] });
});

t.test('an unreadable migrations table is an error, not a crash', async (t) => {
  const result = await checkHealth({
    database: fakeDatabase({
      ping: async () => ({ status: 'error', message: 'connection refused' }),
      pendingMigrations: async () => {
        throw new Error('connection refused');
      },
    }),
    environment,
  });
  t.equal(result.healthy, false);
  t.equal(result.report.migrations.status, 'error');
  t.equal(result.report.database.status, 'error');
});

t.test('a degraded runner is reported under `runner` and keeps the service healthy', async (t) => {
  const runner: RunnerStatus = {
    url: 'http://runner:4000',
    check: async () => ({ status: 'degraded', url: 'http://runner:4000', message: 'runner unreachable' }),
  };
  const result = await checkHealth({ database: fakeDatabase(), environment, runner });
  t.equal(result.healthy, true);
  t.equal(result.report.runner?.status, 'degraded');
});

t.test('missing environment variables make it unhealthy and are listed', async (t) => {
  const result = await checkHealth({
    database: fakeDatabase(),
    environment: { missingVariables: () => ['SESSION_SECRET'] },
  });
  t.equal(result.healthy, false);
  t.same(result.report.environment, { status: 'error', missing: ['SESSION_SECRET'] });
});

t.test('scrapers switched on without a runner is an environment error (issue 28 §8)', async (t) => {
  const flags = (on: boolean) => ({ isEnabled: async () => on });
  const runner: RunnerStatus = {
    url: 'http://runner:8080',
    check: async () => ({ status: 'ok', url: 'http://runner:8080' }),
  };
  const without = await checkHealth({ database: fakeDatabase(), environment, flags: flags(true) });
  t.equal(without.healthy, false, 'the service promises runs it cannot make');
  t.same(without.report.environment, { status: 'error', conflicts: [SCRAPERS_WITHOUT_RUNNER] });
  const off = await checkHealth({ database: fakeDatabase(), environment, flags: flags(false) });
  t.same(off.report.environment, { status: 'ok' }, 'switched off: nothing to run');
  const withRunner = await checkHealth({ database: fakeDatabase(), environment, flags: flags(true), runner });
  t.same(withRunner.report.environment, { status: 'ok' }, 'with a runner configured');
  const unreadable = await checkHealth({
    database: fakeDatabase(),
    environment,
    flags: { isEnabled: async () => Promise.reject(new Error('database down')) },
  });
  t.same(unreadable.report.environment, { status: 'ok' }, 'an unreadable switch counts as off');
});

t.test('a database that does not answer is reported once the deadline passes, not waited for', async (t) => {
  let pings = 0;
  let stalledNow = true;
  let answer: (check: { status: 'ok' }) => void = () => {};
  const stalled = fakeDatabase({
    ping: () => {
      pings += 1;
      if (!stalledNow) return Promise.resolve({ status: 'ok' });
      return new Promise((resolve) => {
        answer = resolve;
      });
    },
  });
  const deps = { database: stalled, environment, databaseDeadlineMs: 20 };
  const first = await checkHealth(deps);
  t.equal(first.healthy, false, 'a stalled database is unhealthy');
  t.match(first.report.database, { status: 'error', message: /did not answer within 20 ms/ });
  t.equal(first.report.migrations.status, 'error');
  t.equal(first.report.postgis.status, 'error');
  const second = await checkHealth(deps);
  t.equal(second.report.database.status, 'error');
  t.equal(pings, 1, 'a check asked while the last one still waits sends nothing more to the database');
  stalledNow = false;
  answer({ status: 'ok' });
  await new Promise((resolve) => setImmediate(resolve));
  deps.databaseDeadlineMs = 60_000;
  const after = await checkHealth(deps);
  t.equal(after.healthy, true, 'answering again, it is healthy again');
});
