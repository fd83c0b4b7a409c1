import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { createMetrics } from '../../../src/adapters/metrics/registry.ts';
import { createDatabasePool, type DatabasePool, row, sql } from '../../../src/adapters/postgres/database.ts';
import { openReplicaSet } from '../../../src/adapters/postgres/read-replicas.ts';
import { composeRead } from '../../../src/composition/read.ts';
import { testConfig } from '../../helpers/app.ts';
import { testDatabase } from '../../helpers/database.ts';

// The read API's pools run without PostgreSQL's parallel workers unless READ_PARALLEL_WORKERS asks
// for them (composition/read.ts): starting them cost 45-90 ms per statement on a 2-core machine,
// more than the reads themselves (docs/performance.md, "Parallel workers").

const Plan = row(Type.Object({ plan: Type.String() }));
const Setting = row(Type.Object({ max_parallel_workers_per_gather: Type.String() }));

/** The plan of a scan that PostgreSQL parallelises whenever it may: every parallel cost zeroed. */
function scanPlan(pool: DatabasePool): Promise<string> {
  return pool.transaction(async (tx) => {
    for (const setting of [
      'parallel_setup_cost',
      'parallel_tuple_cost',
      'min_parallel_table_scan_size',
      'min_parallel_index_scan_size',
    ])
      await tx.query(sql.unsafe`select set_config(${setting}, '0', true)`);
    const lines = await tx.any(sql.type(Plan)`
      explain select count(*) from events where event_timestamp > '2000-01-01'`);
    return lines.map((line) => Object.values(line)[0]).join('\n');
  });
}

t.test('parallelWorkers sets how many workers a statement of the pool may start', async (t) => {
  const db = await testDatabase(t);
  const serial = await createDatabasePool(db.url, { maximumPoolSize: 1, parallelWorkers: 0 });
  const parallel = await createDatabasePool(db.url, { maximumPoolSize: 1, parallelWorkers: 2 });
  const serverDefault = await createDatabasePool(db.url, { maximumPoolSize: 1 });
  t.teardown(() => Promise.all([serial.end(), parallel.end(), serverDefault.end()]));

  t.equal(await serial.oneFirst(sql.type(Setting)`show max_parallel_workers_per_gather`), '0');
  t.equal(await parallel.oneFirst(sql.type(Setting)`show max_parallel_workers_per_gather`), '2');
  t.equal(
    await serverDefault.oneFirst(sql.type(Setting)`show max_parallel_workers_per_gather`),
    await db.pool.oneFirst(sql.type(Setting)`show max_parallel_workers_per_gather`),
    'unset: the server default',
  );

  t.notMatch(await scanPlan(serial), /Gather/, 'with 0 the scan runs in the session alone');
  t.match(await scanPlan(parallel), /Gather[\s\S]*Workers Planned: 2/, 'with 2 it gathers two workers');
});

t.test('the other session settings stay: generic plans and no JIT', async (t) => {
  const db = await testDatabase(t);
  const pool = await createDatabasePool(db.url, {
    maximumPoolSize: 1,
    parallelWorkers: 0,
    genericPlans: true,
  });
  t.teardown(() => pool.end());
  const Settings = row(Type.Object({ plan: Type.String(), jit: Type.String(), workers: Type.String() }));
  t.same(
    await pool.one(sql.type(Settings)`
      select current_setting('plan_cache_mode') as plan, current_setting('jit') as jit,
             current_setting('max_parallel_workers_per_gather') as workers`),
    { plan: 'force_generic_plan', jit: 'off', workers: '0' },
  );
});

/** Every read pool composeRead opens, by the name it gives the metrics, and what each may start. */
async function composedReadPools(t: Test, parallelWorkers: number | undefined) {
  const db = await testDatabase(t);
  const metrics = createMetrics();
  const pools = new Map<string, DatabasePool>();
  const watching = { ...metrics, watchPool: (name: string, pool: DatabasePool) => pools.set(name, pool) };
  const config = testConfig({
    exportCache: { directory: '/nonexistent', maxBytes: 0 }, // no kept exports: no queue, no files
    ...(parallelWorkers === undefined ? {} : { readParallelWorkers: parallelWorkers }),
  });
  // pg-boss serves only the kept exports' jobs, which a cache of 0 bytes turns off.
  const infra = { config, clock: systemClock, metrics: watching, log: () => {}, boss: undefined as never };
  const read = await composeRead(infra, db.url, undefined);
  t.teardown(() => read.close());
  const settings: Record<string, string> = {};
  for (const [name, pool] of pools)
    settings[name] = await pool.oneFirst(sql.type(Setting)`show max_parallel_workers_per_gather`);
  return settings;
}

t.test('composeRead gives READ_PARALLEL_WORKERS to every read pool it opens', async (t) => {
  const expected = (n: string) => ({ read: n, 'read-generic': n, 'export-snapshots': n });
  t.same(await composedReadPools(t, undefined), expected('0'), 'unset: none');
  t.same(await composedReadPools(t, 3), expected('3'), 'READ_PARALLEL_WORKERS=3: three per statement');
});

t.test("the standbys' read pools get the same setting (openReplicaSet)", async (t) => {
  const db = await testDatabase(t);
  // The database itself stands in for a standby: only the pools' session settings are looked at.
  const replicas = await openReplicaSet({
    primary: db.pool,
    urls: [db.url],
    maxLagSeconds: 30,
    timeoutMs: 5_000,
    statementTimeoutMs: 10_000,
    longestStatementMs: 10_000,
    parallelWorkers: 2,
    log: () => {},
  });
  t.teardown(() => replicas.close());
  const standby = replicas.pools.get('replica-1');
  t.ok(standby, 'one standby');
  for (const [name, pool] of Object.entries(standby ?? {}))
    t.equal(await pool.oneFirst(sql.type(Setting)`show max_parallel_workers_per_gather`), '2', name);
});
