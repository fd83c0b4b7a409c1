-- The count model's step 2, its writes (issue 37 §2; docs/scaling.md, "The count model that does
-- not outgrow the events"). Since 0966 (release v0.6) nothing reads the catalogs' level-10 month and
-- year rows of event_cell_counts, the datasets' year rows, or the catalogs' level-6 years; so they
-- stop being written here, and 0968 deletes those already stored. Per level-10 month cell an event
-- now writes two rows (its dataset's and the totals'), and the totals' year: three instead of six.
-- What stays derived, by the triggers on event_cell_counts itself (so every writer, old or new,
-- keeps it right):
--
--   dataset month rows --0966--> dataset all-time cells, dataset cell margins
--   dataset month rows --here--> catalog level-6 months            (at -catalog_id)
--   dataset all-time   --here--> catalog all-time cells            (at -catalog_id)
--   catalog all-time   --0963--> catalog level-6 all-time
--   totals' rows       --0963--> totals' all-time cells, totals' level-6 years, months, all time
--
-- A dataset's rows carry its events' catalog (the key (dataset_id, catalog_id) -> datasets, moved
-- by one cascading update), so each catalog's derived rows are the sums of its datasets' rows.
--
-- Only functions are replaced. The lock makes every writer of event_cell_counts either finish
-- before the replacement or start after it commits (readers go on), as creating 0963's and 0966's
-- triggers did.
lock table event_cell_counts in share row exclusive mode;

-- 0330's events' count trigger. event_counts is unchanged; event_cell_counts gets each dataset's
-- month rows (a dataset's events share its catalog, so one row per month cell) and the totals'
-- months and years.
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
      with by_month as materialized (
        select e.dataset_id, e.catalog_id, date_trunc('month', e.event_timestamp, 'UTC') as month,
               e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y,
               count(*) as n, sum(st_x(e.location)) as lon, sum(st_y(e.location)) as lat
        from %2$s e
        where e.location is not null
        group by 1, 2, 3, 4, 5
      ), cells as (
        select 'm'::"char" as grain, b.month as period, b.dataset_id, b.catalog_id, b.cell_x, b.cell_y,
               b.n, b.lon, b.lat
        from by_month b
        union all
        select p.grain, p.period, 0, 0, b.cell_x, b.cell_y, sum(b.n)::int8, sum(b.lon), sum(b.lat)
        from by_month b cross join lateral (values
          ('y'::"char", date_trunc('year', b.month, 'UTC')),
          ('m'::"char", b.month)) as p(grain, period)
        group by p.grain, p.period, b.cell_x, b.cell_y
      )
      insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
      select c.grain, c.period, c.dataset_id, c.catalog_id, c.cell_x, c.cell_y,
             %1$s * c.n, %1$s * c.lon, %1$s * c.lat
      from cells c
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
        using (select distinct l.dataset_id, l.grain, l.period, e.cell_x, e.cell_y
               from (select distinct e.dataset_id, date_trunc('month', e.event_timestamp, 'UTC') as month,
                            e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y
                     from %1$s e where e.location is not null) e
               cross join lateral (values
                 (e.dataset_id, 'm'::"char", e.month),
                 (0::bigint, 'm'::"char", e.month),
                 (0::bigint, 'y'::"char", date_trunc('year', e.month, 'UTC'))) as l(dataset_id, grain, period)) k
        where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id
          and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
      $q$, changed_rows) using pending;
    end if;
  end loop;
  return null;
end $$;

-- 0961's deferred refresh. The dataset's month rows are a plain insert: a pending dataset has no
-- count rows (0330's invariant), so a conflict would be a broken invariant, and it fails the refresh
-- rather than adding twice. Both inserts are one statement, so each statement trigger on
-- event_cell_counts runs once for it: the insert triggers with the dataset's rows and the totals'
-- new rows together, the update triggers with the totals' rows that were there.
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

  with by_month as materialized (
    select date_trunc('month', e.event_timestamp, 'UTC') as period, e.grid_x >> 14 as cell_x,
           e.grid_y >> 14 as cell_y, count(*) as n, sum(st_x(e.location)) as lon, sum(st_y(e.location)) as lat
    from events e
    where e.dataset_id = target and e.location is not null
    group by 1, 2, 3
  ), dataset_months as (
    insert into event_cell_counts (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
    select 'm', b.period, target, target_catalog, b.cell_x, b.cell_y, b.n, b.lon, b.lat
    from by_month b
    order by b.period, b.cell_x, b.cell_y
  ), totals as (
    select 'm'::"char" as grain, b.period, b.cell_x, b.cell_y, b.n, b.lon, b.lat from by_month b
    union all
    select 'y'::"char", date_trunc('year', b.period, 'UTC'), b.cell_x, b.cell_y, sum(b.n)::int8, sum(b.lon), sum(b.lat)
    from by_month b
    group by 2, 3, 4
  )
  insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
  select c.grain, c.period, 0, 0, c.cell_x, c.cell_y, c.n, c.lon, c.lat
  from totals c
  order by 1, 2, 5, 6
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

-- 0963's derived cells, now from the rows that are still written. Each changed row that feeds a
-- derivation, as signed amounts, with the level it feeds (a dataset's rows feed its catalog's).
create or replace function chronomap_derived_cell_counts_trigger() returns trigger
  language plpgsql
  set work_mem = '64MB'
  as $$
declare
  changes text;
  feeds_all_time boolean;
  -- One transition table's picked rows with their amounts signed (the old rows taken away).
  rows_of constant text := $t$select grain, period, case when dataset_id > 0 then -catalog_id else dataset_id end as level,
                                     dataset_id > 0 as from_dataset, catalog_id, cell_x, cell_y,
                                     %2$s * event_count::int8 as n, %2$s * sum_lon as lon, %2$s * sum_lat as lat
                              from %1$s
                              where dataset_id = 0 or (dataset_id < 0 and grain = 'a') or (dataset_id > 0 and grain in ('m', 'a'))$t$;
  -- Both upserts add the amounts to a row already there (same key in both tables).
  add_to_existing constant text := $m$
    on conflict (grain, period, dataset_id, cell_x, cell_y) do update
      set event_count = r.event_count + excluded.event_count,
          sum_lon = r.sum_lon + excluded.sum_lon,
          sum_lat = r.sum_lat + excluded.sum_lat,
          catalog_id = excluded.catalog_id$m$;
begin
  -- level: where the row's amounts are summed (the totals and a catalog into themselves, a
  -- dataset into its catalog); from_dataset: whether the row is a dataset's.
  changes := case tg_op
    when 'INSERT' then format(rows_of, 'new_rows', 1)
    when 'DELETE' then format(rows_of, 'old_rows', -1)
    else format(rows_of, 'new_rows', 1) || ' union all ' || format(rows_of, 'old_rows', -1)
    end;

  -- Level 6: the totals' rows of every grain, the catalogs' all-time cells, and the datasets'
  -- months into their catalog's (a dataset's all-time cells reach level 6 through its catalog's).
  execute format($q$
    insert into event_coarse_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
    select c.grain, c.period, c.level, min(c.catalog_id), c.cell_x >> 4, c.cell_y >> 4, sum(c.n), sum(c.lon), sum(c.lat)
    from (%s) c
    where not (c.from_dataset and c.grain = 'a')
    group by c.grain, c.period, c.level, c.cell_x >> 4, c.cell_y >> 4
    order by 1, 2, 3, 5, 6
    %s
  $q$, changes, add_to_existing);
  -- A cell whose last event went goes too (as the month rows do, 0330). Only a derived row whose
  -- amount this statement did not raise can have reached zero (every stored row holds events), so
  -- only those keys are probed: an update that only adds, as the deferred refresh's upsert of the
  -- totals, probes none (it probed all 338,000 keys of a 300,000-event refresh, 2.1 s of 43 s).
  if tg_op <> 'INSERT' then
    execute format($q$
      delete from event_coarse_cell_counts r
      using (select grain, period, level, cell_x >> 4 as cell_x, cell_y >> 4 as cell_y
             from (%s) c where not (c.from_dataset and c.grain = 'a')
             group by 1, 2, 3, 4, 5 having sum(c.n) <= 0) k
      where r.grain = k.grain and r.period = k.period and r.dataset_id = k.level
        and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
    $q$, changes);
  end if;

  -- Level 10, all time: the totals' years summed per cell, and the datasets' all-time cells into
  -- their catalog's. The upsert writes 'a' rows of the totals and catalogs into this same table,
  -- which calls this function again with neither (an insert of no rows fires statement triggers
  -- too: without this test it would call itself without end); that call carries them into level 6.
  execute format($q$select exists (select 1 from (%s) c
                     where (c.grain = 'y' and c.level = 0) or (c.grain = 'a' and c.from_dataset))$q$, changes)
    into feeds_all_time;
  if not feeds_all_time then
    return null;
  end if;
  execute format($q$
    insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
    select 'a', '-infinity', c.level, greatest(-c.level, 0), c.cell_x, c.cell_y, sum(c.n), sum(c.lon), sum(c.lat)
    from (%s) c
    where (c.grain = 'y' and c.level = 0) or (c.grain = 'a' and c.from_dataset)
    group by c.level, c.cell_x, c.cell_y
    order by c.level, c.cell_x, c.cell_y
    %s
  $q$, changes, add_to_existing);
  -- Likewise the all-time cells whose last event went.
  if tg_op <> 'INSERT' then
    execute format($q$
      delete from event_cell_counts r
      using (select level, cell_x, cell_y from (%s) c
             where (c.grain = 'y' and c.level = 0) or (c.grain = 'a' and c.from_dataset)
             group by 1, 2, 3 having sum(c.n) <= 0) k
      where r.grain = 'a' and r.period = '-infinity' and r.dataset_id = k.level
        and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
    $q$, changes);
  end if;
  return null;
end $$;
