-- "At most 10 event ids" (spec §Query limits: a cluster lists its events' ids only while it holds
-- ten or fewer) was a literal 10 in each statement that keeps `event_fine_cell_counts.ids`. The
-- limit now lives in one function, which the two functions that keep the ids (0330's versions,
-- otherwise unchanged) read. `MAX_EVENT_IDS` in src/domain/read/clustering.ts is the same number
-- for the read model's SQL; test/integration/read/max-event-ids.test.ts checks that they agree.
-- Immutable, so the planner folds it to a constant as it did the literal.
create function chronomap_max_event_ids() returns integer
  language sql immutable parallel safe as $$ select 10 $$;

create or replace function chronomap_event_fine_counts_trigger() returns trigger
  language plpgsql as $$
declare
  changed text;
  touched bigint[];
  pending bigint[] := '{}';
begin
  if exists (select 1 from datasets where counts_pending) then
    -- (Each transition table exists only for the operations that have it: one statement each.)
    if tg_op = 'INSERT' then
      touched := array(select distinct dataset_id from new_events);
    elsif tg_op = 'DELETE' then
      touched := array(select distinct dataset_id from old_events);
    else
      touched := array(select dataset_id from old_events union select dataset_id from new_events);
    end if;
    pending := chronomap_lock_pending_datasets(touched);
    if cardinality(pending) = cardinality(touched) then
      return null;
    end if;
  end if;
  foreach changed in array case tg_op when 'INSERT' then array['new_events']
                                      when 'DELETE' then array['old_events']
                                      else array['old_events', 'new_events'] end loop
    if changed = 'new_events' then
      insert into event_fine_cell_counts as r (cell_x, cell_y, event_count, sum_lon, sum_lat, ids)
      select e.grid_x >> 8, e.grid_y >> 8, count(*), sum(st_x(e.location)), sum(st_y(e.location)),
             case when count(*) <= chronomap_max_event_ids() then array_agg(e.id) end
      from new_events e
      where e.location is not null and e.dataset_id <> all(pending)
      group by 1, 2
      order by 1, 2
      on conflict (cell_x, cell_y) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat,
            ids = case when r.event_count + excluded.event_count <= chronomap_max_event_ids() then r.ids || excluded.ids end;
    else
      insert into event_fine_cell_counts as r (cell_x, cell_y, event_count, sum_lon, sum_lat, ids)
      select e.grid_x >> 8, e.grid_y >> 8, -count(*), -sum(st_x(e.location)), -sum(st_y(e.location)),
             array_agg(e.id)
      from old_events e
      where e.location is not null and e.dataset_id <> all(pending)
      group by 1, 2
      order by 1, 2
      on conflict (cell_x, cell_y) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat,
            ids = case when r.ids is not null
                       then array(select i from unnest(r.ids) i where i <> all (excluded.ids)) end;
      delete from event_fine_cell_counts r
      using (select distinct e.grid_x >> 8 as cell_x, e.grid_y >> 8 as cell_y
             from old_events e where e.location is not null and e.dataset_id <> all(pending)) k
      where r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0;
    end if;
  end loop;
  return null;
end $$;

create or replace function chronomap_refresh_dataset_counts(target bigint) returns boolean
  language plpgsql
  set work_mem = '256MB'
  as $$
begin
  perform 1 from datasets where id = target and counts_pending for update;
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

  with by_month as (
    select e.dataset_id, e.catalog_id, date_trunc('month', e.event_timestamp, 'UTC') as month,
           e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y,
           count(*) as n, sum(st_x(e.location)) as lon, sum(st_y(e.location)) as lat
    from events e
    where e.dataset_id = target and e.location is not null
    group by 1, 2, 3, 4, 5
  ), by_period as (
    select b.dataset_id, b.catalog_id, p.grain, p.period, b.cell_x, b.cell_y, b.n, b.lon, b.lat
    from by_month b cross join lateral (values
      ('y'::"char", date_trunc('year', b.month, 'UTC')),
      ('m'::"char", b.month)) as p(grain, period)
  )
  insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
  select b.grain, b.period, l.dataset_id, min(l.catalog_id), b.cell_x, b.cell_y, sum(b.n), sum(b.lon), sum(b.lat)
  from by_period b cross join lateral (values
    (b.dataset_id, b.catalog_id), (-b.catalog_id, b.catalog_id), (0::bigint, 0::bigint)) as l(dataset_id, catalog_id)
  group by 1, 2, 3, 5, 6
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
