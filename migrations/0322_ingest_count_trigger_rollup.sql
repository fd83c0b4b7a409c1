-- Ingestion write path: the count trigger of 0200 (with 0310's work_mem) multiplied every changed
-- row by its periods (3 for event_counts, 2 for event_cell_counts) and then sorted the product
-- three ways (grouping sets: dataset, catalog, total). Here each statement's rows are aggregated
-- once at the finest key (dataset, day; dataset, month, level-10 cell) in a hash table, and the
-- coarser periods and the catalog and total levels are added up from that small set; one sort,
-- in key order, before the upsert (so that concurrent writers still queue rather than deadlock).
-- The counts are the same; the coordinate sums are added in another order (floating point: the
-- last digits may differ, as they may between any two orders). The deletes of emptied rows look
-- at the distinct keys only. Explain analyze of a 100,000-row insert into a 1M-event table: the
-- event_counts upsert took 1.06 s before, under 0.2 s after; the cell upsert's aggregation did not
-- shrink for points spread over the world (each event its own cell), where the upsert itself (one
-- index lookup and insert or update per key) is the cost.
create or replace function chronomap_event_counts_trigger() returns trigger
  language plpgsql
  set work_mem = '64MB'
  as $$
declare
  sign integer;
  changed text;
begin
  foreach changed in array case tg_op when 'INSERT' then array['new_events']
                                      when 'DELETE' then array['old_events']
                                      else array['old_events', 'new_events'] end loop
    sign := case changed when 'old_events' then -1 else 1 end;
    execute format($q$
      with by_day as (
        select e.dataset_id, e.catalog_id, date_trunc('day', e.event_timestamp, 'UTC') as day, count(*) as n
        from %2$I e
        group by 1, 2, 3
      ), by_period as (
        select b.dataset_id, b.catalog_id, p.grain, p.period, b.n
        from by_day b cross join lateral (values
          ('y'::"char", date_trunc('year', b.day, 'UTC')),
          ('m'::"char", date_trunc('month', b.day, 'UTC')),
          ('d'::"char", b.day)) as p(grain, period)
      )
      insert into event_counts as r (grain, period, dataset_id, catalog_id, event_count)
      select b.grain, b.period, l.dataset_id, min(l.catalog_id), %1$s * sum(b.n)
      from by_period b cross join lateral (values
        (b.dataset_id, b.catalog_id), (-b.catalog_id, b.catalog_id), (0::bigint, 0::bigint)) as l(dataset_id, catalog_id)
      group by 1, 2, 3
      order by 1, 2, 3
      on conflict (grain, period, dataset_id) do update
        set event_count = r.event_count + excluded.event_count, catalog_id = excluded.catalog_id
    $q$, sign, changed);
    execute format($q$
      with by_month as (
        select e.dataset_id, e.catalog_id, date_trunc('month', e.event_timestamp, 'UTC') as month,
               e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y,
               count(*) as n, sum(st_x(e.location)) as lon, sum(st_y(e.location)) as lat
        from %2$I e
        where e.location is not null
        group by 1, 2, 3, 4, 5
      ), by_period as (
        select b.dataset_id, b.catalog_id, p.grain, p.period, b.cell_x, b.cell_y, b.n, b.lon, b.lat
        from by_month b cross join lateral (values
          ('y'::"char", date_trunc('year', b.month, 'UTC')),
          ('m'::"char", b.month)) as p(grain, period)
      )
      insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
      select b.grain, b.period, l.dataset_id, min(l.catalog_id), b.cell_x, b.cell_y,
             %1$s * sum(b.n), %1$s * sum(b.lon), %1$s * sum(b.lat)
      from by_period b cross join lateral (values
        (b.dataset_id, b.catalog_id), (-b.catalog_id, b.catalog_id), (0::bigint, 0::bigint)) as l(dataset_id, catalog_id)
      group by 1, 2, 3, 5, 6
      order by 1, 2, 3, 5, 6
      on conflict (grain, period, dataset_id, cell_x, cell_y) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat,
            catalog_id = excluded.catalog_id
    $q$, sign, changed);
    if sign < 0 then
      execute format($q$
        delete from event_counts r
        using (select distinct d.dataset_id, p.grain, p.period
               from (select distinct e.dataset_id, e.catalog_id, date_trunc('day', e.event_timestamp, 'UTC') as day
                     from %1$I e) e
               cross join unnest(array[e.dataset_id, -e.catalog_id, 0]) as d(dataset_id) cross join lateral (values
                 ('y'::"char", date_trunc('year', e.day, 'UTC')),
                 ('m'::"char", date_trunc('month', e.day, 'UTC')),
                 ('d'::"char", e.day)) as p(grain, period)) k
        where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id and r.event_count <= 0
      $q$, changed);
      execute format($q$
        delete from event_cell_counts r
        using (select distinct d.dataset_id, p.grain, p.period, e.cell_x, e.cell_y
               from (select distinct e.dataset_id, e.catalog_id, date_trunc('month', e.event_timestamp, 'UTC') as month,
                            e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y
                     from %1$I e where e.location is not null) e
               cross join unnest(array[e.dataset_id, -e.catalog_id, 0]) as d(dataset_id) cross join lateral (values
                 ('y'::"char", date_trunc('year', e.month, 'UTC')),
                 ('m'::"char", e.month)) as p(grain, period)) k
        where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id
          and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
      $q$, changed);
    end if;
  end loop;
  return null;
end $$;
