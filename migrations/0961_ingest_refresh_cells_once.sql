-- The deferred refresh of a bulk import's counts (migration 0330, last replaced in 0765) spent two
-- thirds of its time on event_cell_counts (issue 37: 20.8 of 27.1 s for 300,000 real-shaped events,
-- docs/performance.md, "Ingestion"): it expanded each month cell to two grains and three levels
-- (1.36M rows for 300,000 events) and grouped them again to merge the months of a year. Only the
-- years need that second grouping: a month cell of one dataset is one row at each level, because
-- all the events of a dataset share its catalog. Same rows and sums as before (the sums up to the
-- order of float addition, as before); 15.0 s instead of 20.8 s on the same data. Only the
-- function is replaced: nothing is rewritten or locked beyond its own definition.
create or replace function chronomap_refresh_dataset_counts(target bigint) returns boolean
  language plpgsql
  set work_mem = '256MB'
  as $$
declare
  target_catalog bigint;
begin
  select catalog_id into target_catalog from datasets where id = target and counts_pending for update;
  if not found then
    return false;
  end if;
  with by_day as (
    select e.dataset_id, e.catalog_id, date_trunc('day', e.event_timestamp, 'UTC') as day, count(*) as n
    from events e
    where e.dataset_id = target
    group by 1, 2, 3
  ), by_period as (
    select b.dataset_id, b.catalog_id, p.grain, p.period, b.n
    from by_day b cross join lateral (values
      ('y'::"char", date_trunc('year', b.day, 'UTC')),
      ('m'::"char", date_trunc('month', b.day, 'UTC')),
      ('d'::"char", b.day)) as p(grain, period)
  )
  insert into event_counts as r (grain, period, dataset_id, catalog_id, event_count)
  select b.grain, b.period, l.dataset_id, min(l.catalog_id), sum(b.n)
  from by_period b cross join lateral (values
    (b.dataset_id, b.catalog_id), (-b.catalog_id, b.catalog_id), (0::bigint, 0::bigint)) as l(dataset_id, catalog_id)
  group by 1, 2, 3
  order by 1, 2, 3
  on conflict (grain, period, dataset_id) do update
    set event_count = r.event_count + excluded.event_count, catalog_id = excluded.catalog_id;

  -- Every event of the dataset has its catalog (the key (dataset_id, catalog_id) -> datasets), so
  -- each month cell of the dataset is one row at each of the three levels and needs no second
  -- aggregate; only the years sum the dataset's months.
  with by_month as materialized (
    select date_trunc('month', e.event_timestamp, 'UTC') as period, e.grid_x >> 14 as cell_x,
           e.grid_y >> 14 as cell_y, count(*) as n, sum(st_x(e.location)) as lon, sum(st_y(e.location)) as lat
    from events e
    where e.dataset_id = target and e.location is not null
    group by 1, 2, 3
  ), cells as (
    select 'm'::"char" as grain, b.period, b.cell_x, b.cell_y, b.n, b.lon, b.lat from by_month b
    union all
    select 'y'::"char", date_trunc('year', b.period, 'UTC'), b.cell_x, b.cell_y, sum(b.n)::int8, sum(b.lon), sum(b.lat)
    from by_month b
    group by 2, 3, 4
  )
  insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
  select c.grain, c.period, l.dataset_id, l.catalog_id, c.cell_x, c.cell_y, c.n, c.lon, c.lat
  from cells c cross join (values (target, target_catalog), (-target_catalog, target_catalog), (0::bigint, 0::bigint)) as l(dataset_id, catalog_id)
  order by 1, 2, 3, 5, 6
  on conflict (grain, period, dataset_id, cell_x, cell_y) do update
    set event_count = r.event_count + excluded.event_count,
        sum_lon = r.sum_lon + excluded.sum_lon,
        sum_lat = r.sum_lat + excluded.sum_lat,
        catalog_id = excluded.catalog_id;

  insert into event_fine_cell_counts as r (cell_x, cell_y, event_count, sum_lon, sum_lat, ids)
  select e.grid_x >> 8, e.grid_y >> 8, count(*), sum(st_x(e.location)), sum(st_y(e.location)),
         case when count(*) <= chronomap_max_event_ids() then array_agg(e.id) end
  from events e
  where e.dataset_id = target and e.location is not null
  group by 1, 2
  order by 1, 2
  on conflict (cell_x, cell_y) do update
    set event_count = r.event_count + excluded.event_count,
        sum_lon = r.sum_lon + excluded.sum_lon,
        sum_lat = r.sum_lat + excluded.sum_lat,
        ids = case when r.event_count + excluded.event_count <= chronomap_max_event_ids() then r.ids || excluded.ids end;

  insert into event_cell_day_counts as r (cell_x, cell_y, day, event_count, sum_lon, sum_lat)
  select e.grid_x >> 14, e.grid_y >> 14, date_trunc('day', e.event_timestamp, 'UTC'),
         count(*), sum(st_x(e.location)), sum(st_y(e.location))
  from events e
  where e.dataset_id = target and e.location is not null
  group by 1, 2, 3
  order by 1, 2, 3
  on conflict (cell_x, cell_y, day) do update
    set event_count = r.event_count + excluded.event_count,
        sum_lon = r.sum_lon + excluded.sum_lon,
        sum_lat = r.sum_lat + excluded.sum_lat;

  update datasets set counts_pending = false where id = target;
  return true;
end $$;
