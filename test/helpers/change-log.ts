import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';

/**
 * Waits (at most `boundMs`) until every change stored so far lies below the change log's visibility
 * fence (pg_snapshot_xmin), so that a matching round sees it. Transaction ids are the cluster's, so
 * a transaction open in another test file's database holds the fence back for a moment: a round
 * right after a write may otherwise match nothing yet. Returns whether the fence passed; a test
 * asserts on what was delivered, not on this wait.
 */
export async function changesVisible(pool: DatabasePool, boundMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const passed = await pool.oneFirst(sql.type(row(Type.Object({ passed: Type.Boolean() })))`
      select coalesce(max(txid) < pg_snapshot_xmin(pg_current_snapshot()), true) as passed from event_changes`);
    if (passed || Date.now() > deadline) return passed;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
