import { Type } from 'typebox';
import type { EventTimes } from '../../../ports/feeds/event-times.ts';
import { type DatabasePool, row, sql } from '../database.ts';

const TimesRow = Type.Object({ id: Type.Number(), stored_at: Type.String(), updated_at: Type.String() });

const iso = (column: ReturnType<typeof sql.identifier>) =>
  sql.fragment`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The stored and changed times of events by id (the primary key: one index probe each). */
export function postgresEventTimes(pool: DatabasePool): EventTimes {
  return {
    async of(ids) {
      if (ids.length === 0) return new Map();
      const rows = await pool.any(
        sql.type(row(TimesRow))`
          select id, ${iso(sql.identifier(['created_at']))} as stored_at,
                 ${iso(sql.identifier(['updated_at']))} as updated_at
          from events where id = any(${sql.array([...ids], 'int8')})`,
      );
      return new Map(rows.map((r) => [r.id, { storedAt: r.stored_at, updatedAt: r.updated_at }]));
    },
  };
}
