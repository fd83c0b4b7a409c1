-- Ingestion: a bulk import into an empty dataset stores its events without maintaining the read
-- API's precomputed counts (0200, 0210, 0235 as replaced by 0322); one set-based pass adds the
-- dataset's counts afterwards (chronomap_refresh_dataset_counts). Until then the dataset is
-- `counts_pending` and the read API answers every scope that includes it from the rows, never from
-- the counts (src/adapters/postgres/event-reader.ts). Like a continuous aggregate with real-time
-- aggregation, but exact at every moment.
--
-- The invariant: a pending dataset contributed nothing to any count table when it became pending
-- (it was empty: src/adapters/postgres/ingest-store.ts, deferDatasetCounts), and nothing since (the
-- triggers leave out its rows). So the refresh adds all its rows once. Writers and the refresh
-- serialize on the dataset row: an insert's foreign-key check holds KEY SHARE on it, and a trigger
-- that leaves rows out locks the row FOR KEY SHARE before deciding, while the refresh holds it FOR
-- UPDATE from before it reads the rows until it clears the flag. A writer that left rows out has
-- committed before the refresh reads (the refresh counts them); a writer that waited for the refresh
-- sees the flag cleared and counts its rows itself.
--
-- Changing the flag is an update of datasets: it bumps chronomap_read_scope_version (0230), so the
-- read API's remembered scopes are read again.

alter table datasets add column counts_pending boolean not null default false;
create index datasets_counts_pending_idx on datasets (id) where counts_pending;

-- The pending datasets among `touched`, locked FOR KEY SHARE in id order (so that the refresh waits
-- for this transaction, and this transaction for a refresh under way, which then has cleared the
-- flag: the lock re-reads the row). Empty at once when no dataset is pending (the partial index).
create function chronomap_lock_pending_datasets(touched bigint[]) returns bigint[]
  language plpgsql as $$
declare
  pending bigint[];
begin
  if not exists (select 1 from datasets where counts_pending) then
    return '{}';
  end if;
  select coalesce(array_agg(s.id order by s.id), '{}') into pending
  from (select d.id from datasets d where d.id = any(touched) and d.counts_pending
        order by d.id for key share) s;
  return pending;
end $$;

-- 0322's trigger, leaving out the rows of pending datasets.
create or replace function chronomap_event_counts_trigger() returns trigger
  language plpgsql
  set work_mem = '64MB'
  as $$
declare
  sign integer;
  changed text;
  touched bigint[];
  pending bigint[] := '{}';
  changed_rows text;
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
    sign := case changed when 'old_events' then -1 else 1 end;
    changed_rows := format('(select * from %I where dataset_id <> all($1))', changed);
    execute format($q$
      with by_day as (
        select e.dataset_id, e.catalog_id, date_trunc('day', e.event_timestamp, 'UTC') as day, count(*) as n
        from %2$s e
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
    $q$, sign, changed_rows) using pending;
    execute format($q$
      with by_month as (
        select e.dataset_id, e.catalog_id, date_trunc('month', e.event_timestamp, 'UTC') as month,
               e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y,
               count(*) as n, sum(st_x(e.location)) as lon, sum(st_y(e.location)) as lat
        from %2$s e
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
    $q$, sign, changed_rows) using pending;
    if sign < 0 then
      execute format($q$
        delete from event_counts r
        using (select distinct d.dataset_id, p.grain, p.period
               from (select distinct e.dataset_id, e.catalog_id, date_trunc('day', e.event_timestamp, 'UTC') as day
                     from %1$s e) e
               cross join unnest(array[e.dataset_id, -e.catalog_id, 0]) as d(dataset_id) cross join lateral (values
                 ('y'::"char", date_trunc('year', e.day, 'UTC')),
                 ('m'::"char", date_trunc('month', e.day, 'UTC')),
                 ('d'::"char", e.day)) as p(grain, period)) k
        where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id and r.event_count <= 0
      $q$, changed_rows) using pending;
      execute format($q$
        delete from event_cell_counts r
        using (select distinct d.dataset_id, p.grain, p.period, e.cell_x, e.cell_y
               from (select distinct e.dataset_id, e.catalog_id, date_trunc('month', e.event_timestamp, 'UTC') as month,
                            e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y
                     from %1$s e where e.location is not null) e
               cross join unnest(array[e.dataset_id, -e.catalog_id, 0]) as d(dataset_id) cross join lateral (values
                 ('y'::"char", date_trunc('year', e.month, 'UTC')),
                 ('m'::"char", e.month)) as p(grain, period)) k
        where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id
          and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
      $q$, changed_rows) using pending;
    end if;
  end loop;
  return null;
end $$;

-- 0210's trigger, leaving out the rows of pending datasets.
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
             case when count(*) <= 10 then array_agg(e.id) end
      from new_events e
      where e.location is not null and e.dataset_id <> all(pending)
      group by 1, 2
      order by 1, 2
      on conflict (cell_x, cell_y) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat,
            ids = case when r.event_count + excluded.event_count <= 10 then r.ids || excluded.ids end;
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

-- 0235's trigger, leaving out the rows of pending datasets.
create or replace function chronomap_event_cell_day_counts_trigger() returns trigger
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
      insert into event_cell_day_counts as r (cell_x, cell_y, day, event_count, sum_lon, sum_lat)
      select e.grid_x >> 14, e.grid_y >> 14, date_trunc('day', e.event_timestamp, 'UTC'),
             count(*), sum(st_x(e.location)), sum(st_y(e.location))
      from new_events e
      where e.location is not null and e.dataset_id <> all(pending)
      group by 1, 2, 3
      order by 1, 2, 3
      on conflict (cell_x, cell_y, day) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat;
    else
      insert into event_cell_day_counts as r (cell_x, cell_y, day, event_count, sum_lon, sum_lat)
      select e.grid_x >> 14, e.grid_y >> 14, date_trunc('day', e.event_timestamp, 'UTC'),
             -count(*), -sum(st_x(e.location)), -sum(st_y(e.location))
      from old_events e
      where e.location is not null and e.dataset_id <> all(pending)
      group by 1, 2, 3
      order by 1, 2, 3
      on conflict (cell_x, cell_y, day) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat;
      delete from event_cell_day_counts r
      using (select distinct e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y,
                    date_trunc('day', e.event_timestamp, 'UTC') as day
             from old_events e where e.location is not null and e.dataset_id <> all(pending)) k
      where r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.day = k.day and r.event_count <= 0;
    end if;
  end loop;
  return null;
end $$;

-- Deleting a pending dataset (or its catalog): its events go first, while the row still says
-- pending, so that the count triggers leave them out (the cascade after the row is gone could no
-- longer tell, and would subtract counts that were never added).
create function chronomap_delete_pending_dataset_events() returns trigger
  language plpgsql as $$
begin
  if old.counts_pending then
    delete from events where dataset_id = old.id;
  end if;
  return old;
end $$;

create trigger datasets_pending_events_delete before delete on datasets
  for each row execute function chronomap_delete_pending_dataset_events();

-- Adds the counts of a pending dataset, all of its rows in one pass per count table (the dataset,
-- catalog and total levels, level-16 cells with the ids of cells of ten or fewer, day cells), in key
-- order, and clears the flag: what the triggers would have added statement by statement (the
-- coordinate sums in another order: the last digits may differ). False when the dataset is not
-- pending (any more): done by another refresh, or deleted. The FOR UPDATE waits for every
-- transaction that holds the row (foreign-key checks of inserts, the triggers' KEY SHARE); the
-- statements after it read in a new snapshot (READ COMMITTED), which holds all their rows.
create function chronomap_refresh_dataset_counts(target bigint) returns boolean
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
         case when count(*) <= 10 then array_agg(e.id) end
  from events e
  where e.dataset_id = target and e.location is not null
  group by 1, 2
  order by 1, 2
  on conflict (cell_x, cell_y) do update
    set event_count = r.event_count + excluded.event_count,
        sum_lon = r.sum_lon + excluded.sum_lon,
        sum_lat = r.sum_lat + excluded.sum_lat,
        ids = case when r.event_count + excluded.event_count <= 10 then r.ids || excluded.ids end;

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

-- When a stage last reported progress: the sweep that refreshes the counts of pending datasets whose
-- import stopped (a worker that died and was not resumed) tells a running import by it.
alter table ingest_job_stages add column progressed_at timestamptz;
