import { Type } from 'typebox';
import { timeRangeAnswer } from './answer-path.ts';
import { innerCellRange, ROLLUP_LEVEL } from '../../../domain/read/clustering.ts';
import { type EventFilter, longitudeRanges } from '../../../domain/read/read-query.ts';
import { floorPeriod, type Grain, nextPeriod, type PeriodSpan } from '../../../domain/read/time-ranges.ts';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { joinSql, sqlText, typed } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import { cellPeriodConditions, periodConditions } from './parts.ts';
import { dateExpr, earlier, later, rawConditions } from './rows.ts';
import type { Scope, ScopeResolver } from './scope.ts';

// The first and last instants of a view: from the rows, the day counts or the box's level-10 cell
// periods, as timeRangeAnswer (src/adapters/postgres/read/answer-path.ts) chooses.

const RangeRow = row(
  Type.Object({
    min: Type.Union([Type.String(), Type.Null()]),
    max: Type.Union([Type.String(), Type.Null()]),
  }),
);

export function timeRangeReads(pool: DatabasePool, scopes: ScopeResolver): Pick<EventReader, 'timeRange'> {
  return {
    async timeRange(viewer, filter) {
      const scope = await scopes.scopeOf(viewer, filter);
      const fromRows = async () => {
        const range = await pool.one(typed(RangeRow)`
          select min(${dateExpr(filter)}) as min, max(${dateExpr(filter)}) as max
          from ${eventsFrom(scope)} e where ${rawConditions(scope, filter, filter.dates)}`);
        return range.min && range.max ? { min: range.min, max: range.max } : null;
      };
      const answer = timeRangeAnswer(scope, filter);
      if (answer.kind === 'rows') return fromRows();
      if (answer.kind === 'box-cell-periods')
        return (await boxTimeRange(scope, filter, answer.grain)) ?? fromRows();
      // The first and last days with events come from the day counts; the exact instants from the
      // rows of those two days only.
      const span: PeriodSpan = {
        grain: 'day',
        from: filter.dates.from === null ? null : floorPeriod(filter.dates.from, 'day'),
        to: filter.dates.to,
      };
      const days = await pool.one(typed(RangeRow)`
        select min(period) as min, max(period) as max from event_counts where ${periodConditions(scope, span, false)}`);
      if (!days.min || !days.max) return null;
      const within = (day: string) => ({
        from: later(filter.dates.from, day),
        to: earlier(filter.dates.to, nextPeriod(day, 'day')),
      });
      const range = await pool.one(typed(RangeRow)`
        select (select min(e.event_timestamp) from ${eventsFrom(scope)} e
                where ${rawConditions(scope, filter, within(days.min))}) as min,
               (select max(e.event_timestamp) from ${eventsFrom(scope)} e
                where ${rawConditions(scope, filter, within(days.max))}) as max`);
      // The first or last day may hold events only outside a date range that starts or ends within it.
      return range.min && range.max ? { min: range.min, max: range.max } : fromRows();
    },
  };

  /**
   * The first and last instants in a box (not most of the world, where the rows in time order find
   * them at once): the first and last periods with events in the cells wholly inside the box, from
   * the counts (days for unfiltered views, else months), bound where the rows are read. No inner
   * event lies before the first period, so the first event in the box, inner or in an edge cell,
   * is the first row from the start of the date range to the end of that period (the rows in that
   * span, through the time index); the last likewise. Null when the counts cannot tell (no inner
   * cell holds events in the range, or that period's events are all outside it): the rows answer.
   */
  async function boxTimeRange(
    scope: Scope,
    filter: EventFilter,
    grain: Grain,
  ): Promise<{ min: string; max: string } | null> {
    const bounds = filter.bounds;
    if (!bounds) return null;
    const cells = longitudeRanges(bounds).flatMap((range) => {
      const inner = innerCellRange({ ...bounds, west: range.west, east: range.east }, ROLLUP_LEVEL);
      return inner
        ? [
            sqlText`(cell_x between ${inner.x0} and ${inner.x1} and cell_y between ${inner.y0} and ${inner.y1})`,
          ]
        : [];
    });
    if (cells.length === 0) return null;
    const inCells = sqlText`(${joinSql(cells, ' or ')})`;
    const from = filter.dates.from === null ? null : floorPeriod(filter.dates.from, grain);
    const to = filter.dates.to;
    const inWindow = sqlText`
      ${from === null ? sqlText`` : sqlText`and d.day >= ${from}::timestamptz`}
      ${to === null ? sqlText`` : sqlText`and d.day < ${to}::timestamptz`}`;
    const periods =
      grain === 'day'
        ? // Per cell that holds events, its first and last day through the key: a few index probes.
          await pool.one(typed(RangeRow)`
            select min(f.day) as min, max(l.day) as max
            from (select cell_x as x, cell_y as y from event_cell_counts
                  where grain = 'a' and dataset_id = 0 and ${inCells}) c
            cross join lateral (select day from event_cell_day_counts d
                                where d.cell_x = c.x and d.cell_y = c.y ${inWindow}
                                order by day limit 1) f
            cross join lateral (select day from event_cell_day_counts d
                                where d.cell_x = c.x and d.cell_y = c.y ${inWindow}
                                order by day desc limit 1) l`)
        : await pool.one(typed(RangeRow)`
            select min(period) as min, max(period) as max from event_cell_counts
            where ${cellPeriodConditions(scope, { grain, from, to }, false, false)} and ${inCells}`);
    if (!periods.min || !periods.max) return null;
    const range = await pool.one(typed(RangeRow)`
      select (select min(e.event_timestamp) from ${eventsFrom(scope)} e
              where ${rawConditions(scope, filter, { from: filter.dates.from, to: earlier(to, nextPeriod(periods.min, grain)) })}) as min,
             (select max(e.event_timestamp) from ${eventsFrom(scope)} e
              where ${rawConditions(scope, filter, { from: later(filter.dates.from, periods.max), to })}) as max`);
    return range.min && range.max ? { min: range.min, max: range.max } : null;
  }
}
