import { type DatabasePool, sql } from '../../src/adapters/postgres/database.ts';

// Which statements a test's server still runs: the active backends of the test database whose
// query text contains a marker, polled until a condition holds (cancellation tests).

export function runningStatements(pool: DatabasePool, marker: string) {
  const running = async () =>
    Number(
      await pool.oneFirst(sql.unsafe`
        select count(*)::int from pg_stat_activity
        where datname = current_database() and state = 'active'
          and query like ${`%${marker}%`} and pid <> pg_backend_pid()`),
    );
  /** Polls for about 5 s; true once `wanted` holds for the number running. */
  const waitFor = async (wanted: (n: number) => boolean) => {
    for (let i = 0; i < 100; i += 1) {
      if (wanted(await running())) return true;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return false;
  };
  return { running, waitFor };
}
