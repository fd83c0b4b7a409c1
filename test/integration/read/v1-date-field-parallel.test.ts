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

  const parallelCheck = await db.pool.connect(async (connection) => {
    await connection.query(sql.unsafe`select set_config(${force}, 'on', false)`);
    return connection.oneFirst(sql.unsafe`
      select count(chronomap_try_timestamptz(case when g % 2 = 0 then '2024-01-0' || (g % 9 + 1) else 'nope' end))::int
      from generate_series(1, 1000) g`);
  });
  t.equal(parallelCheck, 500, 'the function runs under force_parallel_mode and turns bad text into null');

  const services = await composeServices(
    testConfig({
      quotasFile: policyFile(t, unlimitedAnonymousReads),
      // Correctness, not speed: a worker per statement is slow on a busy machine.
      budgets: { ...DEFAULT_BUDGETS, readStatementTimeoutMs: 120_000 },
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
