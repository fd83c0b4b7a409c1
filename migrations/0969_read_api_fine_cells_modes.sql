-- The count model's step 3, its first landing (issue 37 §2; docs/scaling.md, "Step 3"): the
-- level-16 cells (event_fine_cell_counts, 0210) get a mode, so that a later landing can stop
-- keeping them on installations where they do not pay (spread data: about one event per row, which
-- no read reads, yet every import writes). This landing only makes every writer and reader honour
-- the mode; the mode stays 'kept' (nothing here changes it), so nothing is written or read
-- differently. Landing it first means that when the switch comes, the release before it reads the
-- mode too.
--
--   kept      written and read (when dense enough, fineCellsPayOff)
--   draining  still written, no longer read: readers stop within their 60-s cache of the density
--   off       empty (truncated), neither written nor read
--
-- Writers (the events' statement triggers and the deferred refresh) read the mode under a shared
-- advisory lock held to the end of their transaction; rebuilding and dropping take it exclusively,
-- so a writer that read 'off' has committed before a rebuild reads the events, and a writer after
-- it reads 'kept'. Readers take no lock: they read the mode in the statement that reads the
-- density (src/adapters/postgres/read/scope.ts).

create table count_table_modes (
  count_table text primary key check (count_table in ('event_fine_cell_counts')),
  mode text not null check (mode in ('kept', 'draining', 'off')),
  changed_at timestamptz not null default now()
);
insert into count_table_modes (count_table, mode) values ('event_fine_cell_counts', 'kept');

-- The key of the writers' shared lock and of the rebuild's and drop's exclusive one.
create function chronomap_fine_cells_lock_key() returns bigint
  language sql immutable
  as $$ select 7237037190520810001::bigint $$;

-- Whether a writer writes the level-16 cells: the mode, read after the shared lock is taken (so a
-- rebuild or drop that holds the lock has committed its mode first).
create function chronomap_fine_cells_written() returns boolean
  language plpgsql volatile
  as $$
begin
  perform pg_advisory_xact_lock_shared(chronomap_fine_cells_lock_key());
  return coalesce((select mode <> 'off' from count_table_modes where count_table = 'event_fine_cell_counts'), true);
end $$;

-- The events' triggers (0210, with 0765's function) fire only while the cells are written. A WHEN
-- condition of a statement trigger is evaluated once per statement, when the trigger is queued.
drop trigger events_fine_counts_insert on events;
drop trigger events_fine_counts_update on events;
drop trigger events_fine_counts_delete on events;
create trigger events_fine_counts_insert after insert on events
  referencing new table as new_events for each statement
  when (chronomap_fine_cells_written()) execute function chronomap_event_fine_counts_trigger();
create trigger events_fine_counts_update after update on events
  referencing old table as old_events new table as new_events for each statement
  when (chronomap_fine_cells_written()) execute function chronomap_event_fine_counts_trigger();
create trigger events_fine_counts_delete after delete on events
  referencing old table as old_events for each statement
  when (chronomap_fine_cells_written()) execute function chronomap_event_fine_counts_trigger();

-- 0967's deferred refresh, its level-16 statement run only while the cells are written (the rest
-- as 0967 wrote it: an applied migration is final, so the whole body is restated).
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

-- kept <-> draining (the table is written in both, so only the mode changes). False when the mode
-- was not `from_mode`.
create function chronomap_fine_cells_move(from_mode text, to_mode text) returns boolean
  language plpgsql volatile
  as $$
begin
  if (from_mode, to_mode) not in (('kept', 'draining'), ('draining', 'kept')) then
    raise exception 'the level-16 cells move between kept and draining only, not from % to %', from_mode, to_mode;
  end if;
  update count_table_modes set mode = to_mode, changed_at = now()
  where count_table = 'event_fine_cell_counts' and mode = from_mode;
  return found;
end $$;

-- kept -> draining: still written, no longer read.
create function chronomap_fine_cells_drain() returns boolean
  language sql volatile
  as $$ select chronomap_fine_cells_move('kept', 'draining') $$;

-- draining -> kept: read again (the table was written all along).
create function chronomap_fine_cells_keep() returns boolean
  language sql volatile
  as $$ select chronomap_fine_cells_move('draining', 'kept') $$;

-- The start of a drop or a rebuild: the exclusive lock (every writer that read the mode has
-- committed, and none starts until this transaction ends), the mode checked, the table emptied.
-- False (and nothing done) when the mode is not `expected`.
create function chronomap_fine_cells_empty_from(expected text) returns boolean
  language plpgsql volatile
  as $$
begin
  perform pg_advisory_xact_lock(chronomap_fine_cells_lock_key());
  if not exists (select 1 from count_table_modes where count_table = 'event_fine_cell_counts' and mode = expected) then
    return false;
  end if;
  truncate event_fine_cell_counts;
  return true;
end $$;

-- draining -> off: emptied and no longer written. `truncate` leaves the table's reltuples unknown
-- (-1), which no reader's density takes as paying. False when not draining.
create function chronomap_fine_cells_drop() returns boolean
  language plpgsql volatile
  as $$
begin
  if not chronomap_fine_cells_empty_from('draining') then
    return false;
  end if;
  update count_table_modes set mode = 'off', changed_at = now() where count_table = 'event_fine_cell_counts';
  return true;
end $$;

-- off -> kept: the cells of every located event whose dataset is not pending (a pending dataset's
-- refresh adds its own, as the triggers leave its rows out), in key order (0236), analysed so that
-- the readers' density sees them, in one transaction. Writers wait for it (the exclusive lock);
-- readers do not (while 'off' none reads the table). False when not off.
create function chronomap_fine_cells_rebuild() returns boolean
  language plpgsql volatile
  set work_mem = '256MB'
  as $$
begin
  if not chronomap_fine_cells_empty_from('off') then
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
  analyze event_fine_cell_counts;
  update count_table_modes set mode = 'kept', changed_at = now() where count_table = 'event_fine_cell_counts';
  return true;
end $$;

-- What the switch will estimate the density from while the table is off: the number of distinct
-- level-16 cells of the events, kept by (auto)analyze.
create statistics events_level16_cells (ndistinct) on (grid_x >> 8), (grid_y >> 8) from events;
