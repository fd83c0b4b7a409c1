import { cellBounds, GRID_LEVEL, gridRange, ROLLUP_LEVEL } from '../../../domain/read/clustering.ts';
import {
  type EventFilter,
  type KeysetPosition,
  longitudeRanges,
  type Sort,
} from '../../../domain/read/read-query.ts';
import { sql } from '../database.ts';
import { joinSql, type Sql, sqlText } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import type { Scope } from './scope.ts';

// The raw event rows of the read model: the filter as conditions on `events e`, the "rows" part of
// every answer path, and the small SQL helpers the other parts share.

type Fragment = Sql;

/** The parts of a box outside the inner cells (of a level), as disjoint strips. */
export function edgeStrips(
  box: { north: number; south: number; east: number; west: number },
  inner: { x0: number; x1: number; y0: number; y1: number },
  level: number = ROLLUP_LEVEL,
): Fragment[] {
  const size = 2 ** level;
  const s = GRID_LEVEL - level;
  const innerWest = cellBounds(inner.x0, inner.y0, level).west;
  const innerNorth = cellBounds(inner.x0, inner.y0, level).north;
  const innerEast = cellBounds(inner.x1, inner.y1, level).east;
  const innerSouth = cellBounds(inner.x1, inner.y1, level).south;
  const e = 1e-7;
  const envelope = (west: number, south: number, east: number, north: number) =>
    sqlText`e.location && st_makeenvelope(${west}, ${south}, ${east}, ${north}, 4326)`;
  const xInside = sqlText`e.grid_x >= ${inner.x0 << s} and e.grid_x < ${(inner.x1 + 1) << s}`;
  const strips: Fragment[] = [];
  // West and east: a narrow range of grid_x, which the covering index reads without the rows. An
  // envelope for the spatial index read the rows instead (a city on the edge of a zoom-6 view,
  // 122k rows at 10M events: 2.9 s).
  if (inner.x0 > 0) strips.push(sqlText`e.grid_x < ${inner.x0 << s}`);
  if (inner.x1 < size - 1) strips.push(sqlText`e.grid_x >= ${(inner.x1 + 1) << s}`);
  if (inner.y0 > 0) {
    strips.push(
      sqlText`${envelope(innerWest - e, innerNorth - e, innerEast + e, box.north)} and ${xInside} and e.grid_y < ${inner.y0 << s}`,
    );
  }
  if (inner.y1 < size - 1) {
    strips.push(
      sqlText`${envelope(innerWest - e, box.south, innerEast + e, innerSouth + e)} and ${xInside} and e.grid_y >= ${(inner.y1 + 1) << s}`,
    );
  }
  return strips;
}

export function rawPart(
  scope: Scope,
  filter: EventFilter,
  dates: { from: string | null; to: string | null },
  level: number | null,
  extra?: Fragment,
  sign: 1 | -1 = 1,
): Fragment {
  const shift = level === null ? 0 : GRID_LEVEL - level;
  const located = level === null ? sqlText`true` : sqlText`e.location is not null`;
  return sqlText`
    select e.dataset_id, e.catalog_id, ${dateExpr(filter)} as t,
           ${level === null ? sqlText`null::int4` : sqlText`e.grid_x >> ${shift}`} as cx,
           ${level === null ? sqlText`null::int4` : sqlText`e.grid_y >> ${shift}`} as cy, e.id,
           ${sign}::int8 as n, st_x(e.location) as slon, st_y(e.location) as slat
    from ${eventsFrom(scope)} e
    where ${located} and ${rawConditions(scope, filter, dates)} ${extra ? sqlText`and ${extra}` : sqlText``}`;
}

export function unionParts(parts: Fragment[]): Fragment {
  return joinSql(parts, ' union all ');
}

export function allOf(conditions: Fragment[]): Fragment {
  return joinSql(conditions, ' and ');
}

export function dateExpr(filter: EventFilter): Fragment {
  if (filter.dateField.kind === 'eventTimestamp') return sqlText`e.event_timestamp`;
  return sqlText`chronomap_try_timestamptz(e.data #>> ${sql.array(filter.dateField.path, 'text')})`;
}

/** The filter as conditions on `events e`, with `dates` for the date range. */
export function rawConditions(
  scope: Scope,
  filter: EventFilter,
  dates: { from: string | null; to: string | null },
): Fragment {
  const conditions: Fragment[] = [sqlText`true`];
  // A whole catalog by its denormalised column, which the (catalog_id, event_timestamp) index serves.
  if (scope.catalogId !== null) conditions.push(sqlText`e.catalog_id = ${scope.catalogId}`);
  else if (scope.datasetIds !== null) conditions.push(sqlText`e.dataset_id = any(${scope.datasetIds})`);
  if (filter.bounds) {
    const { north, south } = filter.bounds;
    // The box as plain comparisons on the coordinates plus the equivalent cell-index range: the
    // covering index on grid_x then answers it without visiting rows (an && test would steer the
    // planner to the spatial index and the heap).
    const boxes = longitudeRanges(filter.bounds).map((range) => {
      const grid = gridRange({ north, south, west: range.west, east: range.east });
      return sqlText`(e.grid_x between ${grid.x0} and ${grid.x1} and e.grid_y between ${grid.y0} and ${grid.y1}
        and st_x(e.location) between ${range.west} and ${range.east}
        and st_y(e.location) between ${south} and ${north})`;
    });
    conditions.push(boxes.length === 1 ? (boxes[0] as Fragment) : sqlText`(${joinSql(boxes, ' or ')})`);
  }
  const date = dateExpr(filter);
  if (dates.from !== null) conditions.push(sqlText`${date} >= ${dates.from}::timestamptz`);
  if (dates.to !== null) conditions.push(sqlText`${date} < ${dates.to}::timestamptz`);
  return allOf(conditions);
}

export function orderBy(sort: Sort): Fragment {
  const direction = sort.descending ? sqlText`desc` : sqlText`asc`;
  const key = sort.key;
  const expression =
    key.field === 'data'
      ? sqlText`e.data #> ${sql.array(key.path, 'text')}`
      : key.field === 'eventTimestamp'
        ? sqlText`e.event_timestamp`
        : key.field === 'isValid'
          ? sqlText`e.is_valid`
          : key.field === 'dataset'
            ? sqlText`e.dataset_id`
            : key.field === 'catalog'
              ? sqlText`e.catalog_id`
              : key.field === 'title'
                ? sqlText`e.title`
                : sqlText`e.id`;
  if (key.field === 'id') return sqlText`e.id ${direction}`;
  // Ties are broken by id in the same direction, so that pages are stable and the default sort
  // walks the (event_timestamp desc, id desc) index.
  return sqlText`${expression} ${direction}, e.id ${direction}`;
}

/**
 * The events after a position in the sort (keyset paging; src/domain/read/event-cursor.ts), as one row
 * comparison that the sort's index answers. The position's sort value is read again from its event
 * by id, so it is exact to the microsecond (the cursor carries milliseconds); the cursor's value is
 * used only when that event has been deleted since.
 */
export function keysetCondition(sort: Sort, after: KeysetPosition): Fragment {
  const comparison = sort.descending ? sqlText`<` : sqlText`>`;
  const field = sort.key.field;
  if (field === 'id') return sqlText`e.id ${comparison} ${after.id}`;
  const column =
    field === 'eventTimestamp'
      ? { name: sqlText`event_timestamp`, type: sqlText`timestamptz` }
      : field === 'dataset'
        ? { name: sqlText`dataset_id`, type: sqlText`int8` }
        : field === 'isValid'
          ? { name: sqlText`is_valid`, type: sqlText`boolean` }
          : null;
  if (column === null) throw new Error(`no keyset paging by ${field}`);
  const value = after.value === null ? null : String(after.value);
  return sqlText`(e.${column.name}, e.id) ${comparison}
    (coalesce((select k.${column.name} from events k where k.id = ${after.id}), ${value}::${column.type}), ${after.id}::int8)`;
}

/** The lon/lat box of a cell (a hair larger; the exact test is on the cell indices). */
export function cellEnvelope(cx: Fragment, cy: Fragment, level: number): Fragment {
  const size = 2 ** level;
  return sqlText`st_makeenvelope(
    ${cx}::float8 * ${360 / size}::float8 - 180 - 1e-9,
    case when ${cy} = ${size - 1} then -90 else degrees(atan(sinh(pi() * (1 - 2 * (${cy} + 1)::float8 / ${size})))) - 1e-9 end,
    (${cx} + 1)::float8 * ${360 / size}::float8 - 180 + 1e-9,
    case when ${cy} = 0 then 90 else degrees(atan(sinh(pi() * (1 - 2 * ${cy}::float8 / ${size})))) + 1e-9 end,
    4326)`;
}

export function later(a: string | null, b: string): string {
  return a !== null && a > b ? a : b;
}

export function earlier(a: string | null, b: string): string {
  return a !== null && a < b ? a : b;
}
