import t from 'tap';
import { Type } from 'typebox';
import { createDatabasePool, type DatabasePool, row, sql } from '../../../src/adapters/postgres/database.ts';
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
