import { Type } from 'typebox';
import { type DatabasePool, row } from '../database.ts';
import { typed } from '../sql-text.ts';

// The change feed's retention (migration 0900; GET /api/v1/changes reads the log, changes.ts).

const CountRow = row(Type.Object({ removed: Type.Number() }));

/** Removes the changes stored more than `keepSeconds` ago; how many it removed. */
export function pruneEventChanges(pool: DatabasePool, keepSeconds: number): Promise<number> {
  return pool.oneFirst(
    typed(CountRow)`select chronomap_prune_event_changes(make_interval(secs => ${keepSeconds})) as removed`,
  );
}
