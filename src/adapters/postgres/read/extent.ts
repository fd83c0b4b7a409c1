import { Type } from 'typebox';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { typed } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import { CountRow } from './counts.ts';
import { countParts } from './parts.ts';
import { rawConditions, unionParts } from './rows.ts';
import type { ScopeResolver } from './scope.ts';

// The extent of a view: its count (from the parts) and the bounding box of its located events.

const ExtentRow = row(
  Type.Object({
    located: Type.Number(),
    west: Type.Union([Type.Number(), Type.Null()]),
    east: Type.Union([Type.Number(), Type.Null()]),
    south: Type.Union([Type.Number(), Type.Null()]),
    north: Type.Union([Type.Number(), Type.Null()]),
  }),
);

export function extentReads(pool: DatabasePool, scopes: ScopeResolver): Pick<EventReader, 'extent'> {
  return {
    async extent(viewer, filter) {
      const scope = await scopes.scopeOf(viewer, filter);
      const count = await pool.oneFirst(typed(CountRow)`
        select coalesce(sum(n), 0)::int8 as count from (${unionParts(countParts(scope, filter))}) p`);
      const where = rawConditions(scope, filter, filter.dates);
      const extent = await pool.one(typed(ExtentRow)`
        select count(e.location)::int8 as located,
               min(st_x(e.location)) as west, max(st_x(e.location)) as east,
               min(st_y(e.location)) as south, max(st_y(e.location)) as north
        from ${eventsFrom(scope)} e where ${where}`);
      const { west, east, south, north } = extent;
      return {
        count,
        located: extent.located,
        bounds:
          west === null || east === null || south === null || north === null
            ? null
            : { west, east, south, north },
      };
    },
  };
}
