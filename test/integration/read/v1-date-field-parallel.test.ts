import t from 'tap';
import { DEFAULT_BUDGETS } from '../../../src/adapters/config/budget-config.ts';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { composeServices } from '../../../src/compose.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { adminQuery, testDatabase } from '../../helpers/database.ts';
import { loadTestServer } from '../../helpers/test-server.ts';
import { getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// dateField=data.<field> casts with chronomap_try_timestamptz, whose EXCEPTION block opens a
// subtransaction. Marked PARALLEL SAFE (migration 0200), every such query failed with "cannot start
// subtransactions during a parallel operation" once the planner chose a parallel plan (large views).
// Forcing parallel plans on every connection makes the small fixture take that path.

t.test('dateField=data.<field> answers under a forced parallel plan', async (t) => {
  const db = await testDatabase(t);
  await loadReadFixture(db.pool);
  const version = Number(
    await db.pool.oneFirst(sql.unsafe`select current_setting('server_version_num')::int`),
  );
  const force = version >= 160000 ? 'debug_parallel_query' : 'force_parallel_mode';
  await adminQuery(loadTestServer().adminUrl, `alter database ${db.name} set ${force} = on`);

  // The fix (migration 0620): the function is not parallel safe, so no plan runs it in a parallel
  // worker, where its EXCEPTION block cannot open a subtransaction. (Calling it directly under the
  // forced mode hangs PostgreSQL 15.20's leader waiting for its workers, so the check reads the
  // catalogue; the request below runs under the forced mode.)
  const safety = await db.pool.oneFirst(
    sql.unsafe`select proparallel from pg_proc where proname = 'chronomap_try_timestamptz'`,
  );
  t.not(safety, 's', 'chronomap_try_timestamptz is not marked parallel safe');

  const services = await composeServices(
    testConfig({
      quotasFile: policyFile(t, unlimitedAnonymousReads),
      // Correctness, not speed: a worker per statement is slow on a busy machine (the request's
      // budget, its statements together, with them).
      budgets: { ...DEFAULT_BUDGETS, readStatementTimeoutMs: 120_000, readRequestBudgetMs: 240_000 },
    }),
    db.url,
    { http: true, workers: false },
  );
  t.teardown(() => services.close());
  const app = services.http;
  if (!app) throw new Error('no HTTP app');
  // One endpoint: under forced parallel mode every statement starts a worker, which is slow on a
  // busy machine; the other /api/v1 endpoints share the same date-field filter.
  const response = await getJson(app, '/api/v1/events', {
    dateField: 'data.startDate',
    startDate: '2023-01-01',
    endDate: '2023-12-31',
  });
  t.equal(response.status, 200, JSON.stringify(response.body).slice(0, 200));
  t.ok(response.body.events.length > 0, 'events of 2023 by their startDate');
});
