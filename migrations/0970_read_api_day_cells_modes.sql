-- The count model's step 1, its first landing (issue 37 §2; docs/scaling.md, "Step 1"): the day
-- cells (event_cell_day_counts, 0235) get the mode the level-16 cells got in 0969, so that a later
-- landing can stop keeping them where they do not pay. On spread data 98 % of the day × cell rows
-- hold one event: the table stores the events again, and the deferred refresh spends 1.8-2.0 s of
-- a 300,000-event import writing it. As in 0969, this landing only makes every writer and reader
-- honour the mode, which stays 'kept': the release before the switch then reads the mode too.
--
-- The mode's functions become one set for every count table that has a mode (the table's name an
-- argument, a lock key per table); 0969's level-16 functions are restated on them, keeping their
-- names (the triggers and the switch call them) and their lock key.

alter table count_table_modes drop constraint count_table_modes_count_table_check;
alter table count_table_modes add constraint count_table_modes_count_table_check
  check (count_table in ('event_fine_cell_counts', 'event_cell_day_counts'));
insert into count_table_modes (count_table, mode) values ('event_cell_day_counts', 'kept');

-- The key of a table's writers' shared lock and of its rebuild's and drop's exclusive one.
create function chronomap_count_table_lock_key(target_table text) returns bigint
  language sql immutable
  as $$
    select case target_table
             when 'event_fine_cell_counts' then chronomap_fine_cells_lock_key()
             when 'event_cell_day_counts' then 7237037190520810002::bigint
           end
  $$;

-- Whether a writer writes the table: its mode is not 'off'. The shared lock, held to the end of the
-- writer's transaction, makes a rebuild or drop wait for the writers that read the mode before it.
create function chronomap_count_table_written(target_table text) returns boolean
  language plpgsql volatile
  as $$
begin
  perform pg_advisory_xact_lock_shared(chronomap_count_table_lock_key(target_table));
  return coalesce((select m.mode <> 'off' from count_table_modes m where m.count_table = target_table), true);
end $$;

-- kept <-> draining (the table is written in both, so only the mode changes). False when the mode
-- was not `from_mode`.
create function chronomap_count_table_move(target_table text, from_mode text, to_mode text) returns boolean
  language plpgsql volatile
  as $$
begin
  if (from_mode, to_mode) not in (('kept', 'draining'), ('draining', 'kept')) then
    raise exception '% moves between kept and draining only, not from % to %', target_table, from_mode, to_mode;
  end if;
  update count_table_modes m set mode = to_mode, changed_at = now()
  where m.count_table = target_table and m.mode = from_mode;
  return found;
end $$;

-- The start of a drop or a rebuild: the exclusive lock (every writer that read the mode has
-- committed, and none starts until this transaction ends), the mode checked, the table emptied.
-- False (and nothing done) when the mode is not `expected`.
create function chronomap_count_table_empty_from(target_table text, expected text) returns boolean
  language plpgsql volatile
  as $$
begin
  perform pg_advisory_xact_lock(chronomap_count_table_lock_key(target_table));
  if not exists (select 1 from count_table_modes m where m.count_table = target_table and m.mode = expected) then
    return false;
  end if;
  execute format('truncate %I', target_table);
  return true;
end $$;

-- draining -> off: emptied and no longer written. `truncate` leaves the table's reltuples unknown
-- (-1). False when not draining.
create function chronomap_count_table_drop(target_table text) returns boolean
  language plpgsql volatile
  as $$
begin
  if not chronomap_count_table_empty_from(target_table, 'draining') then
    return false;
  end if;
  update count_table_modes m set mode = 'off', changed_at = now() where m.count_table = target_table;
  return true;
end $$;

-- The end of a rebuild: the table analysed (readers' statistics) and read again.
create function chronomap_count_table_rebuilt(target_table text) returns void
  language plpgsql volatile
  as $$
begin
  execute format('analyze %I', target_table);
  update count_table_modes m set mode = 'kept', changed_at = now() where m.count_table = target_table;
end $$;

-- 0969's level-16 functions on the set above (same names, same lock key, same behaviour).
create or replace function chronomap_fine_cells_written() returns boolean
  language sql volatile
  as $$ select chronomap_count_table_written('event_fine_cell_counts') $$;

create or replace function chronomap_fine_cells_move(from_mode text, to_mode text) returns boolean
  language sql volatile
  as $$ select chronomap_count_table_move('event_fine_cell_counts', from_mode, to_mode) $$;

create or replace function chronomap_fine_cells_empty_from(expected text) returns boolean
  language sql volatile
  as $$ select chronomap_count_table_empty_from('event_fine_cell_counts', expected) $$;

create or replace function chronomap_fine_cells_drop() returns boolean
  language sql volatile
  as $$ select chronomap_count_table_drop('event_fine_cell_counts') $$;

create or replace function chronomap_fine_cells_rebuild() returns boolean
  language plpgsql volatile
  set work_mem = '256MB'
  as $$
begin
  if not chronomap_count_table_empty_from('event_fine_cell_counts', 'off') then
    return false;
  end if;
  insert into event_fine_cell_counts (cell_x, cell_y, event_count, sum_lon, sum_lat, ids)
  select e.grid_x >> 8, e.grid_y >> 8, count(*), sum(st_x(e.location)), sum(st_y(e.location)),
         case when count(*) <= chronomap_max_event_ids() then array_agg(e.id) end
  from events e
  where e.location is not null
    and not exists (select 1 from datasets d where d.id = e.dataset_id and d.counts_pending)
  group by 1, 2
  order by 1, 2;
  perform chronomap_count_table_rebuilt('event_fine_cell_counts');
  return true;
end $$;

-- The day cells' writers: the events' three statement triggers (0235, as 0330 restated their
-- function) run only while the cells are written; the deferred refresh below checks the same.
drop trigger events_cell_day_counts_insert on events;
drop trigger events_cell_day_counts_update on events;
drop trigger events_cell_day_counts_delete on events;
create trigger events_cell_day_counts_insert after insert on events
  referencing new table as new_events for each statement
  when (chronomap_count_table_written('event_cell_day_counts'))
  execute function chronomap_event_cell_day_counts_trigger();
create trigger events_cell_day_counts_update after update on events
  referencing old table as old_events new table as new_events for each statement
  when (chronomap_count_table_written('event_cell_day_counts'))
  execute function chronomap_event_cell_day_counts_trigger();
create trigger events_cell_day_counts_delete after delete on events
  referencing old table as old_events for each statement
  when (chronomap_count_table_written('event_cell_day_counts'))
  execute function chronomap_event_cell_day_counts_trigger();

-- off -> kept: the day cells of every located event whose dataset is not pending (a pending
-- dataset's refresh adds its own), in key order, analysed, read again, in one transaction. Writers
-- wait for it (the exclusive lock); readers do not (while 'off' none reads the table). False when
-- not off.
create function chronomap_day_cells_rebuild() returns boolean
  language plpgsql volatile
  set work_mem = '256MB'
  as $$
begin
  if not chronomap_count_table_empty_from('event_cell_day_counts', 'off') then
    return false;
  end if;
  insert into event_cell_day_counts (cell_x, cell_y, day, event_count, sum_lon, sum_lat)
  select e.grid_x >> 14, e.grid_y >> 14, date_trunc('day', e.event_timestamp, 'UTC'),
         count(*), sum(st_x(e.location)), sum(st_y(e.location))
  from events e
  where e.location is not null
    and not exists (select 1 from datasets d where d.id = e.dataset_id and d.counts_pending)
  group by 1, 2, 3
  order by 1, 2, 3;
  perform chronomap_count_table_rebuilt('event_cell_day_counts');
  return true;
end $$;

-- 0969's refresh, its day cells written only while their mode is not 'off' (the rest unchanged).
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

  if chronomap_fine_cells_written() then
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
  end if;

  if chronomap_count_table_written('event_cell_day_counts') then
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
  end if;

  update datasets set counts_pending = false where id = target;
  return true;
end $$;

-- What the switch will estimate the day cells' density from while they are off: the distinct
-- (level-10 cell, UTC day) keys of the events, kept by (auto)analyze. (`date_trunc` with a time
-- zone is only stable, so the day is the UTC date.)
create statistics events_level10_days (ndistinct)
  on (grid_x >> 14), (grid_y >> 14), ((event_timestamp at time zone 'UTC')::date) from events;
