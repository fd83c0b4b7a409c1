import type { Test } from 'tap';
import { Type } from 'typebox';
import type { DatabasePool } from '../../src/adapters/postgres/database.ts';
import { row, sql } from '../../src/adapters/postgres/database.ts';
import type { CommonQueryMethods, FragmentSqlToken as Fragment } from 'slonik';

// Every count table of the read API (event_counts, event_cell_counts of migration 0200 as 0967
// keeps it, with its all-time rows of 0963 and 0966, event_fine_cell_counts of 0210 (empty while
// 0969's mode is 'off'), event_cell_day_counts of 0235 (empty while 0970's mode is 'off'),
// event_coarse_cell_counts of 0963,
// dataset_cell_margins of 0966) against a recount from `events`, as
// the migrations' "Events stored before this migration" backfills compute it. Coordinate sums agree
// to 1e-6 (they are added in other orders); a level-16 cell of ten or fewer events lists exactly its
// ids, a larger one none.

const Mismatch = row(Type.Object({ mismatch: Type.String() }));

const LEVELS = sql.fragment`case when grouping(e.dataset_id) = 0 then e.dataset_id
  when grouping(e.catalog_id) = 0 then -e.catalog_id else 0 end`;

const sumsDiffer = sql.fragment`(abs(s.sum_lon - r.sum_lon) > 1e-6 or abs(s.sum_lat - r.sum_lat) > 1e-6)`;

/** The checks; `written`: conditions, true while the level-16 cells (0969), the day cells (0970) are written. */
const checks = (written: { fineCells: Fragment; dayCells: Fragment }) => [
  sql.fragment`
    with r as (
      select p.grain, p.period, ${LEVELS} as dataset_id, count(*)::int as n
      from events e cross join lateral (values
        ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
        ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC')),
        ('d'::"char", date_trunc('day', e.event_timestamp, 'UTC'))) as p(grain, period)
      group by grouping sets ((p.grain, p.period, e.dataset_id), (p.grain, p.period, e.catalog_id), (p.grain, p.period)))
    select format('event_counts %s %s %s: stored %s, recounted %s', grain, period, dataset_id, s.event_count, r.n) as mismatch
    from event_counts s full join r using (grain, period, dataset_id)
    where s.event_count is distinct from r.n`,
  // The level-10 months of each dataset (with its catalog, from which its catalog's derived rows
  // are summed) and the totals' months and years (migration 0967).
  sql.fragment`
    with r as (
      select p.grain, p.period, case when grouping(e.dataset_id) = 0 then e.dataset_id else 0 end as dataset_id,
             e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y, min(e.catalog_id) as catalog_id,
             count(*)::int as n, sum(st_x(e.location)) as sum_lon, sum(st_y(e.location)) as sum_lat
      from events e cross join lateral (values
        ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
        ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC'))) as p(grain, period)
      where e.location is not null
      group by grouping sets ((p.grain, p.period, e.dataset_id, e.grid_x >> 14, e.grid_y >> 14),
                              (p.grain, p.period, e.grid_x >> 14, e.grid_y >> 14))
      having grouping(e.dataset_id) = 1 or p.grain = 'm')
    select format('event_cell_counts %s %s %s %s:%s: stored %s, recounted %s', grain, period, dataset_id,
                  cell_x, cell_y, s.event_count, r.n) as mismatch
    from (select * from event_cell_counts where grain <> 'a') s full join r using (grain, period, dataset_id, cell_x, cell_y)
    where s.event_count is distinct from r.n or ${sumsDiffer}
       or s.catalog_id <> case when s.dataset_id > 0 then r.catalog_id else 0 end`,
  // The all-time cells (grain 'a'): the totals and each catalog (migration 0963), each dataset (0966).
  sql.fragment`
    with r as (
      select ${LEVELS} as dataset_id, e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y,
             count(*)::int as n, sum(st_x(e.location)) as sum_lon, sum(st_y(e.location)) as sum_lat,
             min(e.catalog_id) as catalog_id
      from events e
      where e.location is not null
      group by grouping sets ((e.dataset_id, e.grid_x >> 14, e.grid_y >> 14),
                              (e.catalog_id, e.grid_x >> 14, e.grid_y >> 14), (e.grid_x >> 14, e.grid_y >> 14)))
    select format('event_cell_counts a %s %s:%s: stored %s, recounted %s', dataset_id, cell_x, cell_y,
                  s.event_count, r.n) as mismatch
    from (select * from event_cell_counts where grain = 'a') s full join r using (dataset_id, cell_x, cell_y)
    where s.event_count is distinct from r.n or ${sumsDiffer}
       or s.period <> '-infinity'
       or s.catalog_id <> case when s.dataset_id > 0 then r.catalog_id else greatest(-s.dataset_id, 0) end`,
  // The level-6 cells (migration 0963): months and all time of the totals and each catalog, and the
  // totals' years (0967).
  sql.fragment`
    with r as (
      select p.grain, p.period, case when grouping(e.catalog_id) = 0 then -e.catalog_id else 0 end as dataset_id,
             e.grid_x >> 18 as cell_x, e.grid_y >> 18 as cell_y,
             count(*)::int as n, sum(st_x(e.location)) as sum_lon, sum(st_y(e.location)) as sum_lat
      from events e cross join lateral (values
        ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
        ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC')),
        ('a'::"char", '-infinity'::timestamptz)) as p(grain, period)
      where e.location is not null
      group by grouping sets ((p.grain, p.period, e.catalog_id, e.grid_x >> 18, e.grid_y >> 18),
                              (p.grain, p.period, e.grid_x >> 18, e.grid_y >> 18))
      having grouping(e.catalog_id) = 1 or p.grain <> 'y')
    select format('event_coarse_cell_counts %s %s %s %s:%s: stored %s, recounted %s', grain, period, dataset_id,
                  cell_x, cell_y, s.event_count, r.n) as mismatch
    from event_coarse_cell_counts s full join r using (grain, period, dataset_id, cell_x, cell_y)
    where s.event_count is distinct from r.n or ${sumsDiffer} or s.catalog_id <> greatest(-s.dataset_id, 0)`,
  // The level-16 cells: every located event's while they are written, none while 'off' (0969).
  sql.fragment`
    with r as (
      select grid_x >> 8 as cell_x, grid_y >> 8 as cell_y, count(*)::int as n,
             sum(st_x(location)) as sum_lon, sum(st_y(location)) as sum_lat, array_agg(id order by id) as ids
      from events where location is not null and ${written.fineCells} group by 1, 2)
    select format('event_fine_cell_counts %s:%s: stored %s %s, recounted %s %s', cell_x, cell_y,
                  s.event_count, s.ids, r.n, r.ids) as mismatch
    from event_fine_cell_counts s full join r using (cell_x, cell_y)
    where s.event_count is distinct from r.n or ${sumsDiffer}
       or (case when r.n <= 10 then r.ids end) is distinct from (select array_agg(i order by i) from unnest(s.ids) i)`,
  sql.fragment`
    with r as (
      select grid_x >> 14 as cell_x, grid_y >> 14 as cell_y, date_trunc('day', event_timestamp, 'UTC') as day,
             count(*)::int as n, sum(st_x(location)) as sum_lon, sum(st_y(location)) as sum_lat
      from events where location is not null and ${written.dayCells} group by 1, 2, 3)
    select format('event_cell_day_counts %s:%s %s: stored %s, recounted %s', cell_x, cell_y, day,
                  s.event_count, r.n) as mismatch
    from event_cell_day_counts s full join r using (cell_x, cell_y, day)
    where s.event_count is distinct from r.n or ${sumsDiffer}`,
  // The datasets' cell margins (migration 0966): located events per dataset and column or row of level-10 cells.
  sql.fragment`
    with r as (
      select e.dataset_id, a.axis, a.cell, count(*)::int as n
      from events e cross join lateral (values ('x'::"char", e.grid_x >> 14), ('y'::"char", e.grid_y >> 14)) a(axis, cell)
      where e.location is not null
      group by 1, 2, 3)
    select format('dataset_cell_margins %s %s %s: stored %s, recounted %s', dataset_id, axis, cell,
                  s.event_count, r.n) as mismatch
    from dataset_cell_margins s full join r using (dataset_id, axis, cell)
    where s.event_count is distinct from r.n`,
];

/**
 * Whether the level-16 cells and the day cells are written: their modes (migrations 0969, 0970),
 * read only where the mode table exists (the databases of migration tests stopped before 0969
 * always write both; a table without a mode row is written).
 */
async function tablesWritten(pool: DatabasePool): Promise<{ fineCells: Fragment; dayCells: Fragment }> {
  const modes = await pool.oneFirst(
    sql.type(
      row(Type.Object({ exists: Type.Boolean() })),
    )`select to_regclass('count_table_modes') is not null as exists`,
  );
  const written = (table: string) =>
    modes
      ? sql.fragment`coalesce((select mode from count_table_modes where count_table = ${table}), 'kept') <> 'off'`
      : sql.fragment`true`;
  return { fineCells: written('event_fine_cell_counts'), dayCells: written('event_cell_day_counts') };
}

export async function assertCountTablesExact(t: Test, pool: DatabasePool, when: string): Promise<void> {
  const mismatches: string[] = [];
  for (const check of checks(await tablesWritten(pool)))
    mismatches.push(...(await pool.anyFirst(sql.type(Mismatch)`select mismatch from (${check}) m limit 20`)));
  t.same(mismatches, [], `${when}: every count table equals a recount from the events`);
}

/** An admin: sees every dataset, so an unfiltered view of theirs may read the count tables with a mode. */
export const SEES_EVERYTHING = { id: 1, email: 'admin@example.org', role: 'admin', trustLevel: 5 } as const;

/** A count table's mode (migrations 0969, 0970). */
export function countTableMode(
  pool: CommonQueryMethods,
  table: 'event_fine_cell_counts' | 'event_cell_day_counts',
): Promise<string> {
  return pool.oneFirst(
    sql.type(row(Type.Object({ mode: Type.String() })))`
      select mode from count_table_modes where count_table = ${table}`,
  );
}
