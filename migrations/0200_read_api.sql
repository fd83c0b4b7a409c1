-- Read API (/api/v1): per-event Web Mercator cell indices and precomputed counts.
--
-- grid_x/grid_y are the event's cell at level 24 (2^24 cells per axis, ~2.4 m at the equator).
-- They are generated columns, so every writer (ingestion, seed-demo, plain SQL) fills them; a
-- cluster at level L is GROUP BY grid_x >> (24 - L), grid_y >> (24 - L). src/domain/clustering.ts
-- computes the same indices.

create function chronomap_mercator_x(lon float8) returns integer
  language sql immutable strict parallel safe
  return least(16777215, greatest(0, floor((lon + 180.0) / 360.0 * 16777216.0)))::integer;

create function chronomap_mercator_y(lat float8) returns integer
  language sql immutable strict parallel safe
  return least(16777215, greatest(0, floor(
    (1.0 - asinh(tan(radians(least(85.05112878, greatest(-85.05112878, lat))))) / pi()) / 2.0 * 16777216.0
  )))::integer;

alter table events
  add column grid_x integer generated always as (chronomap_mercator_x(st_x(location))) stored,
  add column grid_y integer generated always as (chronomap_mercator_y(st_y(location))) stored;

-- Edge strips of a view (cells only partly inside the bounds) are read by cell range.
create index events_grid_x_idx on events (grid_x);
create index events_grid_y_idx on events (grid_y);

-- Per dataset and UTC day: counts for histograms, stats and totals without bounds.
create table event_day_counts (
  dataset_id bigint not null,
  catalog_id bigint not null,
  day timestamptz not null,
  event_count integer not null,
  primary key (dataset_id, day)
);

-- Per dataset, UTC month and level-10 cell (~39 km): counts and coordinate sums (for centroids)
-- of located events, for map views at low zoom and for counts within bounds.
create table event_cell_months (
  dataset_id bigint not null,
  catalog_id bigint not null,
  month timestamptz not null,
  cell_x integer not null,
  cell_y integer not null,
  event_count integer not null,
  sum_lon float8 not null,
  sum_lat float8 not null,
  primary key (dataset_id, month, cell_x, cell_y)
);
create index event_cell_months_month_idx on event_cell_months (month);

-- The counts follow every change to events through statement-level triggers with transition
-- tables: one aggregated upsert per statement, whoever writes. Keys are upserted in key order so
-- that concurrent writers wait on each other rather than deadlock.
create function chronomap_event_counts_trigger() returns trigger
  language plpgsql as $$
declare
  sign integer;
  changed text;
begin
  -- Transition tables are visible only to SQL run by the trigger function itself (dynamic SQL
  -- included), hence one function for every operation: UPDATE subtracts the old rows and adds
  -- the new ones.
  foreach changed in array case tg_op when 'INSERT' then array['new_events']
                                      when 'DELETE' then array['old_events']
                                      else array['old_events', 'new_events'] end loop
    sign := case changed when 'old_events' then -1 else 1 end;
    execute format($q$
      insert into event_day_counts as r (dataset_id, catalog_id, day, event_count)
      select dataset_id, min(catalog_id), date_trunc('day', event_timestamp, 'UTC'), %1$s * count(*)
      from %2$I group by 1, 3 order by 1, 3
      on conflict (dataset_id, day) do update set event_count = r.event_count + excluded.event_count,
                                                  catalog_id = excluded.catalog_id
    $q$, sign, changed);
    execute format($q$
      insert into event_cell_months as r (dataset_id, catalog_id, month, cell_x, cell_y, event_count, sum_lon, sum_lat)
      select dataset_id, min(catalog_id), date_trunc('month', event_timestamp, 'UTC'), grid_x >> 14, grid_y >> 14,
             %1$s * count(*), %1$s * sum(st_x(location)), %1$s * sum(st_y(location))
      from %2$I where location is not null group by 1, 3, 4, 5 order by 1, 3, 4, 5
      on conflict (dataset_id, month, cell_x, cell_y) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat,
            catalog_id = excluded.catalog_id
    $q$, sign, changed);
    if sign < 0 then
      execute format($q$
        delete from event_day_counts r
        using (select distinct dataset_id, date_trunc('day', event_timestamp, 'UTC') as day from %1$I) k
        where r.dataset_id = k.dataset_id and r.day = k.day and r.event_count <= 0
      $q$, changed);
      execute format($q$
        delete from event_cell_months r
        using (select distinct dataset_id, date_trunc('month', event_timestamp, 'UTC') as month,
                      grid_x >> 14 as cell_x, grid_y >> 14 as cell_y
               from %1$I where location is not null) k
        where r.dataset_id = k.dataset_id and r.month = k.month and r.cell_x = k.cell_x
          and r.cell_y = k.cell_y and r.event_count <= 0
      $q$, changed);
    end if;
  end loop;
  return null;
end $$;

create trigger events_counts_insert after insert on events
  referencing new table as new_events for each statement execute function chronomap_event_counts_trigger();
create trigger events_counts_update after update on events
  referencing old table as old_events new table as new_events
  for each statement execute function chronomap_event_counts_trigger();
create trigger events_counts_delete after delete on events
  referencing old table as old_events for each statement execute function chronomap_event_counts_trigger();

create function chronomap_event_counts_truncate() returns trigger
  language plpgsql as $$
begin
  truncate event_day_counts, event_cell_months;
  return null;
end $$;
create trigger events_counts_truncate after truncate on events
  for each statement execute function chronomap_event_counts_truncate();

-- Events already stored before this migration.
insert into event_day_counts (dataset_id, catalog_id, day, event_count)
select dataset_id, min(catalog_id), date_trunc('day', event_timestamp, 'UTC'), count(*)
from events group by 1, 3;
insert into event_cell_months (dataset_id, catalog_id, month, cell_x, cell_y, event_count, sum_lon, sum_lat)
select dataset_id, min(catalog_id), date_trunc('month', event_timestamp, 'UTC'), grid_x >> 14, grid_y >> 14,
       count(*), sum(st_x(location)), sum(st_y(location))
from events where location is not null group by 1, 3, 4, 5;

-- Custom date fields declared by a dataset (schema_settings.dateFields, e.g. ["startDate"]) are
-- filtered with this cast, which turns unparseable values into null instead of failing the query.
create function chronomap_try_timestamptz(value text) returns timestamptz
  language plpgsql stable parallel safe as $$
begin
  return value::timestamptz;
exception when others then
  return null;
end $$;
