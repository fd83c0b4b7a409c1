import { Type } from 'typebox';
import { extentAnswer } from './answer-path.ts';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { type Sql, sqlText, typed } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import { CountRow } from './counts.ts';
import { countParts } from './parts.ts';
import { rawConditions, unionParts } from './rows.ts';
import type { Scope, ScopeResolver } from './scope.ts';

// The extent of a view: its count (from the parts) and the bounding box of its located events, from
// the rows or, for everything and large catalogs, from the spatial index (extentAnswer in
// answer-path.ts).

const side = Type.Union([Type.Number(), Type.Null()]);
const ExtentFields = { located: Type.Number(), west: side, east: side, south: side, north: side };
const ExtentRow = row(Type.Object(ExtentFields));

/** A side of the map: the axis its coordinate is on, and whether it is that axis' low or high end. */
const SIDES = {
  west: { axis: 'x', toward: -1 },
  east: { axis: 'x', toward: 1 },
  south: { axis: 'y', toward: -1 },
  north: { axis: 'y', toward: 1 },
} as const;

/** Far beyond any coordinate of the map, in degrees. */
const FAR = 1000;

/**
 * One edge of the scope's located events. The spatial index's nearest-neighbour scan from a line
 * beyond that side of the map (the planar distance to it orders the events by that coordinate)
 * finds the scope's outermost event after a few index entries: everything, or a catalog whose
 * events are a large share of all. The distance is computed in floating point, so two events less
 * than an ulp apart could come out in either order: the edge is then the extreme coordinate among
 * the events from 1e-9 degrees inward of the one found out to the line, through the same index.
 */
function edge(scope: Scope, where: Sql, side: keyof typeof SIDES): Sql {
  const { axis, toward } = SIDES[side];
  const events = eventsFrom(scope);
  const coordinate = axis === 'x' ? sqlText`st_x(e.location)` : sqlText`st_y(e.location)`;
  const end = toward * FAR;
  // The line beyond the side: across the other axis at `end` on this one.
  const line =
    axis === 'x'
      ? sqlText`st_setsrid(st_makeline(st_makepoint(${end}, ${-FAR}), st_makepoint(${end}, ${FAR})), 4326)`
      : sqlText`st_setsrid(st_makeline(st_makepoint(${-FAR}, ${end}), st_makepoint(${FAR}, ${end})), 4326)`;
  const nearest = sqlText`(select ${coordinate} from ${events} e
    where e.location is not null and ${where} order by e.location <-> ${line} limit 1)`;
  // The strip from just inward of the event found to the line: [low, high] on this axis.
  const inner = sqlText`${nearest} - ${toward} * 1e-9`;
  const [low, high] = toward < 0 ? [sqlText`${-FAR}`, inner] : [inner, sqlText`${FAR}`];
  const strip =
    axis === 'x'
      ? sqlText`st_makeenvelope(${low}, ${-FAR}, ${high}, ${FAR}, 4326)`
      : sqlText`st_makeenvelope(${-FAR}, ${low}, ${FAR}, ${high}, 4326)`;
  const extreme = toward < 0 ? sqlText`min(${coordinate})` : sqlText`max(${coordinate})`;
  return sqlText`(select ${extreme} from ${events} e where e.location && ${strip} and ${where})`;
}

const NearestExtentRow = row(Type.Object({ count: Type.Number(), ...ExtentFields }));

export function extentReads(pool: DatabasePool, scopes: ScopeResolver): Pick<EventReader, 'extent'> {
  return {
    async extent(viewer, filter) {
      const scope = await scopes.scopeOf(viewer, filter);
      const parts = unionParts(countParts(scope, filter));
      const where = rawConditions(scope, filter, filter.dates);
      const { count, ...extent } =
        extentAnswer(scope, filter).kind === 'nearest-to-edges'
          ? // One statement: the located count is the count less the unlocated events of the same snapshot.
            await pool.one(typed(NearestExtentRow)`
              select c.count, c.count - (select count(*) from ${eventsFrom(scope)} e
                                         where e.location is null and ${where})::int8 as located,
                     ${edge(scope, where, 'west')} as west, ${edge(scope, where, 'east')} as east,
                     ${edge(scope, where, 'south')} as south, ${edge(scope, where, 'north')} as north
              from (select coalesce(sum(n), 0)::int8 as count from (${parts}) p) c`)
          : {
              count: await pool.oneFirst(typed(CountRow)`
                select coalesce(sum(n), 0)::int8 as count from (${parts}) p`),
              ...(await pool.one(typed(ExtentRow)`
                select count(e.location)::int8 as located,
                       min(st_x(e.location)) as west, max(st_x(e.location)) as east,
                       min(st_y(e.location)) as south, max(st_y(e.location)) as north
                from ${eventsFrom(scope)} e where ${where}`)),
            };
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
