-- Two coarser forms of the level-10 cell counts of the totals (dataset_id 0) and of each catalog
-- (dataset_id -<catalog id>), for the views that read many cells (issue 37 §2 and §3;
-- docs/scaling.md, "The count model that does not outgrow the events"):
--
-- - the all-time cells: grain 'a' of event_cell_counts (period '-infinity'; check widened in 0962),
--   per level-10 cell every event of all time. An undated view of everything or of a whole catalog
--   reads these instead of summing the cell's year rows: on real-shaped data a Europe box holds
--   30,813 year rows against 7,034 all-time cells, and undated views (the Explore page's first
--   view, tiles, the map) are the common ones;
-- - the level-6 cells (event_coarse_cell_counts, about 625 km at the equator): the level-10 rows
--   (years, months, all time) summed per level-6 cell, for map views at zoom 0-4 (cluster levels
--   2-6, COARSE_LEVEL in src/domain/read/clustering.ts). On 1M real-shaped events a recent year's
--   months are 80,000-130,000 level-10 rows against 6,500-7,300 here, the world of all time 42,749
--   against 856.
--
-- Both are kept from the level-10 rows by one trigger on event_cell_counts itself, not by the
-- writers of those rows: the events' statement triggers (0330), the deferred refresh (0961) and the
-- previous release's copies of both, which may still run while this release's migrations are
-- applied (docs/upgrading.md). Whatever changes a level-10 row of the totals or of a catalog changes
-- its derived rows by the same amounts in the same transaction, so no writer, old or new, can leave
-- them apart. Each statement's changes are summed per derived key first (one upsert per key).
create table event_coarse_cell_counts (
  grain "char" not null check (grain in ('y', 'm', 'a')),
  period timestamptz not null,
  dataset_id bigint not null check (dataset_id <= 0),
  catalog_id bigint not null,
  cell_x integer not null,
  cell_y integer not null,
  event_count bigint not null,
  sum_lon float8 not null,
  sum_lat float8 not null,
  -- A view reads its periods' rows of a range of cells: the key, and the counts beside it for an
  -- index-only scan.
  primary key (grain, period, dataset_id, cell_x, cell_y) include (catalog_id, event_count, sum_lon, sum_lat)
);

create function chronomap_derived_cell_counts_trigger() returns trigger
  language plpgsql
  set work_mem = '64MB'
  as $$
declare
  changes text;
  years boolean;
  -- Both upserts add the amounts to a row already there (same key in both tables).
  add_to_existing constant text := $m$
    on conflict (grain, period, dataset_id, cell_x, cell_y) do update
      set event_count = r.event_count + excluded.event_count,
          sum_lon = r.sum_lon + excluded.sum_lon,
          sum_lat = r.sum_lat + excluded.sum_lat,
          catalog_id = excluded.catalog_id$m$;
begin
  -- The level-10 rows of the totals and catalogs this statement changed, as signed amounts.
  changes := case tg_op
    when 'INSERT' then
      $s$select grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count::int8 as n, sum_lon as lon, sum_lat as lat
         from new_rows where dataset_id <= 0$s$
    when 'DELETE' then
      $s$select grain, period, dataset_id, catalog_id, cell_x, cell_y, -event_count::int8 as n, -sum_lon as lon, -sum_lat as lat
         from old_rows where dataset_id <= 0$s$
    else
      $s$select grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count::int8 as n, sum_lon as lon, sum_lat as lat
         from new_rows where dataset_id <= 0
         union all
         select grain, period, dataset_id, catalog_id, cell_x, cell_y, -event_count::int8, -sum_lon, -sum_lat
         from old_rows where dataset_id <= 0$s$
    end;

  -- Level 6: every grain, each level-10 row into its level-6 cell.
  execute format($q$
    insert into event_coarse_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
    select c.grain, c.period, c.dataset_id, min(c.catalog_id), c.cell_x >> 4, c.cell_y >> 4, sum(c.n), sum(c.lon), sum(c.lat)
    from (%s) c
    group by c.grain, c.period, c.dataset_id, c.cell_x >> 4, c.cell_y >> 4
    order by 1, 2, 3, 5, 6
    %s
  $q$, changes, add_to_existing);
  if tg_op <> 'INSERT' then
    execute format($q$
      delete from event_coarse_cell_counts r
      using (select distinct grain, period, dataset_id, cell_x >> 4 as cell_x, cell_y >> 4 as cell_y from (%s) c) k
      where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id
        and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
    $q$, changes);
  end if;

  -- All time: the year rows, summed per cell. The upsert below writes 'a' rows into this same
  -- table, which calls this function again with no year rows (and, since an insert of no rows still
  -- fires statement triggers, without this test it would call itself without end). That call
  -- carries the 'a' rows into level 6 above.
  execute format('select exists (select 1 from (%s) c where c.grain = ''y'')', changes) into years;
  if not years then
    return null;
  end if;
  execute format($q$
    insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
    select 'a', '-infinity', c.dataset_id, min(c.catalog_id), c.cell_x, c.cell_y, sum(c.n), sum(c.lon), sum(c.lat)
    from (%s) c
    where c.grain = 'y'
    group by c.dataset_id, c.cell_x, c.cell_y
    order by c.dataset_id, c.cell_x, c.cell_y
    %s
  $q$, changes, add_to_existing);
  -- A cell whose last event went: its all-time row goes too (as the year rows do, 0330).
  if tg_op <> 'INSERT' then
    execute format($q$
      delete from event_cell_counts r
      using (select distinct dataset_id, cell_x, cell_y from (%s) c where c.grain = 'y') k
      where r.grain = 'a' and r.period = '-infinity' and r.dataset_id = k.dataset_id
        and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
    $q$, changes);
  end if;
  return null;
end $$;

create function chronomap_derived_cell_counts_truncate() returns trigger
  language plpgsql as $$
begin
  truncate event_coarse_cell_counts;
  return null;
end $$;

-- Creating the triggers locks event_cell_counts against writers (SHARE ROW EXCLUSIVE; readers go
-- on) until this migration commits: every writer's level-10 rows are then either committed before
-- the backfill below reads them, or written after, through these triggers.
create trigger event_cell_counts_derived_insert after insert on event_cell_counts
  referencing new table as new_rows
  for each statement execute function chronomap_derived_cell_counts_trigger();
create trigger event_cell_counts_derived_update after update on event_cell_counts
  referencing old table as old_rows new table as new_rows
  for each statement execute function chronomap_derived_cell_counts_trigger();
create trigger event_cell_counts_derived_delete after delete on event_cell_counts
  referencing old table as old_rows
  for each statement execute function chronomap_derived_cell_counts_trigger();
create trigger event_cell_counts_derived_truncate after truncate on event_cell_counts
  for each statement execute function chronomap_derived_cell_counts_truncate();

-- The counts stored before this migration: the all-time rows from the year rows (their level-6
-- rows follow through the trigger), then the level-6 years and months.
insert into event_cell_counts (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
select 'a', '-infinity', dataset_id, min(catalog_id), cell_x, cell_y, sum(event_count), sum(sum_lon), sum(sum_lat)
from event_cell_counts
where grain = 'y' and dataset_id <= 0
group by dataset_id, cell_x, cell_y
order by dataset_id, cell_x, cell_y;

insert into event_coarse_cell_counts (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
select grain, period, dataset_id, min(catalog_id), cell_x >> 4, cell_y >> 4, sum(event_count), sum(sum_lon), sum(sum_lat)
from event_cell_counts
where grain in ('y', 'm') and dataset_id <= 0
group by grain, period, dataset_id, cell_x >> 4, cell_y >> 4
order by 1, 2, 3, 5, 6;
