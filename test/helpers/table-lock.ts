import pg from 'pg';
import type { Test } from 'tap';
import { type DatabasePool, sql } from '../../src/adapters/postgres/database.ts';
import type { TestDatabase } from './database.ts';

// Statements held open without timing: the test takes an ACCESS EXCLUSIVE lock on a table in a
// transaction of its own, and every statement that reads the table waits on it (visible in
// pg_stat_activity) until the test lets go, or until something cancels it.

/** Locks `table` until `release` (or the test's end) rolls the transaction back. */
export async function lockTable(
  t: Test,
  db: TestDatabase,
  table: string,
): Promise<{ release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query('begin');
  await client.query(`lock table ${client.escapeIdentifier(table)} in access exclusive mode`);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('rollback');
    await client.end();
  };
  t.teardown(release);
  return { release };
}

/** How many statements of the test database wait for a lock now. */
export async function waitingOnLocks(pool: DatabasePool): Promise<number> {
  return Number(
    await pool.oneFirst(sql.unsafe`
      select count(*)::int from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`),
  );
}

/** Polls until exactly `count` statements wait for a lock; false after about 60 s. */
export async function untilWaitingOnLocks(pool: DatabasePool, count: number): Promise<boolean> {
  for (let i = 0; i < 600; i += 1) {
    if ((await waitingOnLocks(pool)) === count) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}
