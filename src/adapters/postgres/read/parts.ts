import { countAnswer, type CountNeed } from './answer-path.ts';
import {
  COARSE_LEVEL,
  GRID_LEVEL,
  innerCellRange,
  mercatorCell,
  ROLLUP_LEVEL,
} from '../../../domain/read/clustering.ts';
import { type Bounds, type EventFilter, longitudeRanges } from '../../../domain/read/read-query.ts';
import {
  floorPeriod,
  type Grain,
  type PeriodSpan,
  periodStarts,
  splitRange,
} from '../../../domain/read/time-ranges.ts';
import { sql } from '../database.ts';
import { type Sql, sqlText } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import { fineCellCounts } from './fine-cells.ts';
import { allOf, dateExpr, edgeStrips, rawConditions, rawPart } from './rows.ts';
import type { Scope } from './scope.ts';

// The counting "parts" algebra of the read model (tables and triggers in
// migrations/0200_read_api.sql). Counting is split into parts whose union is exactly the filtered
// events:
// - precomputed rows (event_counts per dataset and UTC year/month/day; event_cell_counts per
//   dataset, UTC year/month and level-10 cell) for the whole periods and cells the filter covers, and
// - raw event rows for the rest (partial days or months at the ends of a date range, cells only
//   partly inside the bounds).
// Each part yields (dataset_id, catalog_id, t, cx, cy, id, n, slon, slat); callers group as they
// need. Which counts answer a view is the policy of src/adapters/postgres/read/answer-path.ts (countAnswer); this
// file turns its answer into SQL.

type Fragment = Sql;

/** What a count asks for (CountNeed), with the SQL of the months a histogram bin boundary cuts. */
type Need = Omit<CountNeed, 'cutMonths'> & {
  /** With histogram 'day': the month starts (a query's rows `m`) a bin boundary falls inside. */
  cutMonths?: Fragment;
};

/**
 * The parts whose union is exactly the filtered events. `level` asks for cells of that grid level
 * (cx, cy); `histogram` asks for a time column t fine enough for the bins: 'day' when each bin is
 * made of whole UTC days, 'month' when of whole months, null when only rows will do.
 */
export function countParts(scope: Scope, filter: EventFilter, need: Need = {}): Fragment[] {
  const level = need.level ?? null;
  const perDataset = need.perDataset ?? false;
  const cutMonths = need.cutMonths ?? null;
  const answer = countAnswer(scope, filter, {
    level: need.level,
    histogram: need.histogram,
    perDataset,
    cutMonths: cutMonths !== null,
  });
  switch (answer.kind) {
    case 'rows':
      return [rawPart(scope, filter, filter.dates, level)];
    case 'period-counts':
      return periodParts(scope, filter, answer.grains, perDataset);
    case 'world-minus-outside':
      return worldParts(scope, filter, need);
    case 'level-16-cells':
      return fineCellCounts(filter, answer.level);
    case 'level-10-cells':
      return cellParts(scope, filter, level, perDataset, {
        grains: answer.grains,
        dayCells: answer.dayCells,
        cutMonths: answer.cutMonths ? cutMonths : null,
        allTime: answer.allTime,
        coarse: answer.coarse,
      });
  }
}

const GRAIN_CODE: Record<Grain, string> = { year: 'y', month: 'm', day: 'd' };

/**
 * A closed span of event_cell_counts is asked as its list of periods (`listed`) when it has at most
 * this many: the primary key (grain, period, dataset_id, cell_x, cell_y) then reads each period's
 * totals in the box's columns, one descent per period. As a range, the planner took the by-cell
 * index (grain, dataset_id, cell_x, cell_y, period), whose only narrowing condition is the box's
 * columns: every period of ten years in the whole strip of the map, for a one-year window at zoom 4
 * 529 index pages for 72 rows against 116 listed (300,000 events); the primary key with a range
 * reads every dataset's rows of the months.
 */
const MAX_LISTED_PERIODS = 240;

/**
 * Conditions on event_counts. Rows with dataset_id 0 are the totals over all datasets, rows with
 * -<catalog id> a catalog's: read when that is the scope and no per-dataset breakdown is asked for.
 */
export function periodConditions(
  scope: Scope,
  span: PeriodSpan,
  perDataset: boolean,
  listed: boolean = false,
): Fragment {
  return allOf([periodCondition(span, listed), levelCondition(scope, perDataset)]);
}

/**
 * Conditions on the level-10 rows of event_cell_counts in a span of years or months. The totals
 * (dataset_id 0) answer a view of everything; any other scope sums its datasets' month rows (a
 * catalog's view included): the count model keeps no catalog month or year rows and no dataset
 * year rows in the end (docs/scaling.md, "The count model that does not outgrow the events", step
 * 2), so no reader asks for them (countAnswer asks the others for months only).
 */
export function cellPeriodConditions(
  scope: Scope,
  span: PeriodSpan,
  perDataset: boolean,
  listed: boolean,
): Fragment {
  // The scope's level with no catalog rows: a catalog's scope reads its datasets (datasetIds).
  return allOf([periodCondition(span, listed), levelCondition({ ...scope, catalogId: null }, perDataset)]);
}

/** A span's grain and periods, listed (`listed`, MAX_LISTED_PERIODS) or as a range. */
function periodCondition(span: PeriodSpan, listed: boolean): Fragment {
  const conditions: Fragment[] = [sqlText`grain = ${GRAIN_CODE[span.grain]}`];
  const starts = listed ? periodStarts(span, MAX_LISTED_PERIODS) : null;
  if (starts) conditions.push(sqlText`period = any(${sql.array(starts, 'timestamptz')})`);
  else {
    if (span.from !== null) conditions.push(sqlText`period >= ${span.from}::timestamptz`);
    if (span.to !== null) conditions.push(sqlText`period < ${span.to}::timestamptz`);
  }
  return allOf(conditions);
}

/**
 * Which level's rows of event_counts, and of the derived cells (the all-time rows and
 * event_coarse_cell_counts, migration 0963), a scope reads: totals, a catalog's, or datasets'.
 */
function levelCondition(scope: Scope, perDataset: boolean): Fragment {
  // `<= 0`, redundant, lets a generic plan (the /events page's, pageAnswer's genericPlan) prove that the
  // partial index of the total rows (migration 0250) applies: without it, it read the primary key's
  // period range of every dataset.
  if (scope.catalogId !== null && !perDataset)
    return sqlText`dataset_id = -${scope.catalogId} and dataset_id <= 0`;
  if (scope.datasetIds !== null) return sqlText`dataset_id = any(${scope.datasetIds})`;
  return perDataset ? sqlText`dataset_id > 0` : sqlText`dataset_id = 0`;
}

/** No bounds: whole years, months and days from event_counts, the partial days from the rows. */
function periodParts(scope: Scope, filter: EventFilter, grains: Grain[], perDataset: boolean): Fragment[] {
  const split = splitRange(filter.dates, grains);
  return [
    ...split.periods.map(
      (span) => sqlText`
        select dataset_id, catalog_id, period as t, null::int4 as cx, null::int4 as cy, null::int8 as id,
               event_count::int8 as n, null::float8 as slon, null::float8 as slat
        from event_counts where ${periodConditions(scope, span, perDataset)}`,
    ),
    ...split.rest.map((piece) => rawPart(scope, filter, piece, null)),
  ];
}

/**
 * Bounds: per longitude range, the whole years and months in the level-10 cells wholly inside the
 * box come from event_cell_counts (with `allTime`, an undated count of the totals or a catalog, the
 * cells' all-time rows instead), and for unfiltered views the whole days at the ends of a date
 * range (and the months in `cutMonths`) from event_cell_day_counts; the rows supply the edge cells
 * and the partial days (or months).
 */
function cellParts(
  scope: Scope,
  filter: EventFilter,
  level: number | null,
  perDataset: boolean,
  counts: {
    grains: Grain[];
    dayCells: boolean;
    cutMonths: Fragment | null;
    allTime: boolean;
    coarse: boolean;
  },
): Fragment[] {
  const bounds = filter.bounds;
  if (!bounds) throw new Error('cellParts needs bounds');
  const { grains, cutMonths } = counts;
  const split = splitRange(filter.dates, counts.dayCells ? [...grains, 'day'] : grains);
  const parts: Fragment[] = [];
  for (const range of longitudeRanges(bounds)) {
    const box = { north: bounds.north, south: bounds.south, west: range.west, east: range.east };
    const boxFilter = { ...filter, bounds: box };
    const inner = split.periods.length > 0 ? innerCellRange(box, ROLLUP_LEVEL) : null;
    if (!inner) {
      parts.push(rawPart(scope, boxFilter, filter.dates, level));
      continue;
    }
    const cellRows = (rows: CountRows) => innerCellCounts(box, inner, level, counts.coarse, rows);
    // One open span (no dates): the cells' all-time rows, at the scope's level (totals, a catalog, datasets).
    if (counts.allTime) {
      const allTime = sqlText`grain = 'a' and ${levelCondition(scope, perDataset)}`;
      parts.push(...cellRows({ level10: allTime, level6: allTime }));
    }
    for (const span of counts.allTime ? [] : split.periods) {
      if (span.grain === 'day') {
        // A day span lies within one month (the ends of a date range).
        if (span.from === null || span.to === null) throw new Error('a day span is never open');
        const month = sqlText`m.period = ${floorPeriod(span.from, 'month')}::timestamptz`;
        // From the day cells or from the rows, whichever reads less (dayCellsPay); the other part
        // is skipped by its one-time filter.
        const days = { from: span.from, to: span.to };
        const pay = dayCellsPay(inner, month, days);
        parts.push(dayCellPart(inner, level, sqlText`${month} and ${pay}`, days));
        parts.push(rawPart(scope, boxFilter, days, level, sqlText`not ${pay} and ${innerRows(inner)}`));
        continue;
      }
      const cut = cutMonths && span.grain === 'month';
      const uncut = (rows: Fragment) =>
        cut ? sqlText`${rows} and period not in (select m from (${cutMonths}) k)` : rows;
      parts.push(
        ...cellRows({
          level10: uncut(cellPeriodConditions(scope, span, perDataset, true)),
          // The level-6 cells keep the totals and each catalog (readsCoarseCells).
          level6: uncut(periodConditions(scope, span, perDataset, true)),
        }),
      );
      if (cut) {
        const months = [sqlText`m.period in (select m from (${cutMonths}) k)`];
        if (span.from !== null) months.push(sqlText`m.period >= ${span.from}::timestamptz`);
        if (span.to !== null) months.push(sqlText`m.period < ${span.to}::timestamptz`);
        parts.push(dayCellPart(inner, level, allOf(months), null));
      }
    }
    // The whole periods form one contiguous range; its rows in the edge cells are read strip by
    // strip (west, east, north, south of the inner cells), each an envelope for the spatial index
    // and exact conditions on the level-24 cell indices.
    const froms = split.periods.map((span) => span.from);
    const tos = split.periods.map((span) => span.to);
    const covered = {
      from: froms.includes(null) ? null : ((froms as string[]).sort()[0] ?? null),
      to: tos.includes(null) ? null : ((tos as string[]).sort().at(-1) ?? null),
    };
    for (const strip of edgeStrips(box, inner)) parts.push(rawPart(scope, boxFilter, covered, level, strip));
    for (const piece of split.rest) parts.push(rawPart(scope, boxFilter, piece, level));
  }
  return parts;
}

type CellRange = { x0: number; x1: number; y0: number; y1: number };

/** The count rows a part reads, as a condition on each count table's grain, period and level. */
type CountRows = { level10: Fragment; level6: Fragment };

const COUNT_TABLES = {
  [ROLLUP_LEVEL]: sqlText`event_cell_counts`,
  [COARSE_LEVEL]: sqlText`event_coarse_cell_counts`,
};

/**
 * The count rows matching `rows` (conditions on grain, period and level, per table) of the level-10 cells
 * `inner`, as cells of `level`. With `coarse` (readsCoarseCells), the level-6 cells wholly inside the
 * box come from event_coarse_cell_counts and only the level-10 cells around them from
 * event_cell_counts: every level-10 cell of a level-6 cell inside the box is inside it too, so the
 * two sets are disjoint and together make `inner`.
 */
function innerCellCounts(
  box: Bounds,
  inner: CellRange,
  level: number | null,
  coarse: boolean,
  rows: CountRows,
): Fragment[] {
  const big = coarse ? innerCellRange(box, COARSE_LEVEL) : null;
  if (!big) return [countRows(ROLLUP_LEVEL, inner, level, rows.level10)];
  const scale = 2 ** (ROLLUP_LEVEL - COARSE_LEVEL);
  const covered = {
    x0: big.x0 * scale,
    x1: (big.x1 + 1) * scale - 1,
    y0: big.y0 * scale,
    y1: (big.y1 + 1) * scale - 1,
  };
  const ring = [
    { x0: inner.x0, x1: covered.x0 - 1, y0: inner.y0, y1: inner.y1 },
    { x0: covered.x1 + 1, x1: inner.x1, y0: inner.y0, y1: inner.y1 },
    { x0: covered.x0, x1: covered.x1, y0: inner.y0, y1: covered.y0 - 1 },
    { x0: covered.x0, x1: covered.x1, y0: covered.y1 + 1, y1: inner.y1 },
  ].filter((range) => range.x0 <= range.x1 && range.y0 <= range.y1);
  return [
    countRows(COARSE_LEVEL, big, level, rows.level6),
    ...ring.map((range) => countRows(ROLLUP_LEVEL, range, level, rows.level10)),
  ];
}

/** The rows of one count table (by its cell level) in a range of its cells, as cells of `level`. */
function countRows(
  tableLevel: typeof ROLLUP_LEVEL | typeof COARSE_LEVEL,
  cells: CellRange,
  level: number | null,
  rows: Fragment,
): Fragment {
  const shift = level === null ? 0 : tableLevel - level;
  const cx = level === null ? sqlText`null::int4` : sqlText`cell_x >> ${shift}`;
  const cy = level === null ? sqlText`null::int4` : sqlText`cell_y >> ${shift}`;
  return sqlText`
    select dataset_id, catalog_id, period as t, ${cx} as cx, ${cy} as cy, null::int8 as id,
           event_count::int8 as n, sum_lon as slon, sum_lat as slat
    from ${COUNT_TABLES[tableLevel]}
    where ${rows} and cell_x between ${cells.x0} and ${cells.x1} and cell_y between ${cells.y0} and ${cells.y1}`;
}

/** The events of the level-10 cells `inner` (the edge strips read the rest of the box). */
function innerRows(inner: CellRange): Fragment {
  const shift = GRID_LEVEL - ROLLUP_LEVEL;
  return sqlText`e.grid_x between ${inner.x0 << shift} and ${((inner.x1 + 1) << shift) - 1}
    and e.grid_y between ${inner.y0 << shift} and ${((inner.y1 + 1) << shift) - 1}`;
}

/**
 * What a probe of event_cell_day_counts costs against an entry of the time index that the rows of
 * the same days are read through: 1,479 probes took 28 ms (19 µs each) on 1M real-shaped events,
 * an index-only entry about 1 µs; ten keeps the day cells wherever they gather several events.
 */
const DAY_PROBE_COST = 10;

/**
 * Whether the whole days `span` (within one month) of the inner cells cost less from the day cells
 * than from the rows: the day cells take a probe per cell of the box holding events that month,
 * the rows an entry per event of those days (from event_counts; the day cells exist for the totals
 * only, so does this). On dense data (a city's calls) a day cell stands for many events; on data
 * spread like the world's places, where most day cells hold one event, a continent's month cells
 * are more than the events of half a month. An uncorrelated condition: PostgreSQL evaluates it once
 * and runs only the part it selects.
 */
function dayCellsPay(inner: CellRange, month: Fragment, span: { from: string; to: string }): Fragment {
  const events = sqlText`(select coalesce(sum(event_count), 0) from event_counts
                          where grain = 'd' and dataset_id = 0
                            and period >= ${span.from}::timestamptz and period < ${span.to}::timestamptz)`;
  return sqlText`((select count(*) from (select 1 from event_cell_counts m
                    where m.grain = 'm' and m.dataset_id = 0 and ${month}
                      and m.cell_x between ${inner.x0} and ${inner.x1} and m.cell_y between ${inner.y0} and ${inner.y1}
                    limit ${events} / ${DAY_PROBE_COST} + 1) k) * ${DAY_PROBE_COST} <= ${events})`;
}

/**
 * Day counts of the inner cells in the months `months` (a condition on `m.period`), within `span`
 * when given. Driven by those months' cell rows (the cells that hold events then), each reading its
 * days through the table's key (`offset 0` keeps the planner from joining every day of those cells
 * and filtering them afterwards).
 */
function dayCellPart(
  inner: { x0: number; x1: number; y0: number; y1: number },
  level: number | null,
  months: Fragment,
  span: { from: string | null; to: string | null } | null,
): Fragment {
  const shift = level === null ? 0 : ROLLUP_LEVEL - level;
  const cx = level === null ? sqlText`null::int4` : sqlText`m.cell_x >> ${shift}`;
  const cy = level === null ? sqlText`null::int4` : sqlText`m.cell_y >> ${shift}`;
  const from =
    span === null || span.from === null
      ? sqlText`m.period`
      : sqlText`greatest(m.period, ${span.from}::timestamptz)`;
  const end = sqlText`m.period + interval '1 month'`;
  const to = span === null || span.to === null ? end : sqlText`least(${end}, ${span.to}::timestamptz)`;
  return sqlText`
    select 0::int8 as dataset_id, 0::int8 as catalog_id, d.day as t, ${cx} as cx, ${cy} as cy, null::int8 as id,
           d.event_count::int8 as n, d.sum_lon as slon, d.sum_lat as slat
    from event_cell_counts m
    cross join lateral (select d.day, d.event_count, d.sum_lon, d.sum_lat from event_cell_day_counts d
                        where d.cell_x = m.cell_x and d.cell_y = m.cell_y and d.day >= ${from} and d.day < ${to}
                        offset 0) d
    where m.grain = 'm' and m.dataset_id = 0 and ${months}
      and m.cell_x between ${inner.x0} and ${inner.x1} and m.cell_y between ${inner.y0} and ${inner.y1}`;
}

/**
 * The counts without bounds, less one per event outside the box: unlocated, beyond its latitudes, or
 * within them but beyond its longitudes (disjoint sets, each found through the spatial index).
 */
function worldParts(scope: Scope, filter: EventFilter, need: Need): Fragment[] {
  const bounds = filter.bounds;
  if (!bounds) throw new Error('worldParts needs bounds');
  const { north, south, west, east } = bounds;
  const everywhere = { ...filter, bounds: null };
  const outside = (condition: Fragment) => rawPart(scope, everywhere, filter.dates, null, condition, -1);
  // Beside the box (its latitudes, beyond its longitudes): a range of the level-24 cell index
  // (widened by one cell), which the covering index on grid_x reads without the rows (a city lies
  // there, Auckland beyond 170° E: through the spatial index, its rows cost 30 times more).
  const x = (longitude: number) => mercatorCell(longitude, 0, GRID_LEVEL).x;
  const beside = (from: number, to: number, condition: Fragment) =>
    outside(sqlText`e.grid_x between ${Math.max(0, x(from) - 1)} and ${x(to) + 1}
      and st_y(e.location) between ${south} and ${north} and ${condition}`);
  // The unlocated without their (null) coordinates: an index-only scan of the partial index of
  // migration 0220 (asked for st_x(e.location), the planner took a bitmap scan of the spatial index
  // and the rows instead, 30 times slower).
  const unlocated = sqlText`
    select e.dataset_id, e.catalog_id, ${dateExpr(filter)} as t, null::int4 as cx, null::int4 as cy, e.id,
           -1::int8 as n, null::float8 as slon, null::float8 as slat
    from ${eventsFrom(scope)} e where e.location is null and ${rawConditions(scope, everywhere, filter.dates)}`;
  const parts = [
    ...countParts(scope, everywhere, need),
    unlocated,
    outside(
      sqlText`e.location && st_makeenvelope(-180, ${north}, 180, 90, 4326) and st_y(e.location) > ${north}`,
    ),
    outside(
      sqlText`e.location && st_makeenvelope(-180, -90, 180, ${south}, 4326) and st_y(e.location) < ${south}`,
    ),
  ];
  if (west > east)
    parts.push(beside(east, west, sqlText`st_x(e.location) > ${east} and st_x(e.location) < ${west}`));
  else {
    if (west > -180) parts.push(beside(-180, west, sqlText`st_x(e.location) < ${west}`));
    if (east < 180) parts.push(beside(east, 180, sqlText`st_x(e.location) > ${east}`));
  }
  return parts;
}
