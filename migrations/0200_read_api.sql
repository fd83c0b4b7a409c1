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

-- Covering indexes, so that the row-by-row parts of the read API are index-only scans (no visit
-- to the wide rows with their data): one for views by area (a range of grid_x, the rest filtered
-- inside the index), one for the partial periods at the ends of a date range.
create index events_grid_cover_idx on events (grid_x)
  include (grid_y, dataset_id, catalog_id, event_timestamp, location, id);
create index events_time_cover_idx on events (event_timestamp)
  include (dataset_id, catalog_id, grid_x, grid_y, location, id);

-- Event counts per dataset and UTC period, at three grains: 'y' (year), 'm' (month), 'd' (day).
-- A date range is answered from whole years, then whole months, then whole days, and the rows of
-- the partial days at its ends (src/domain/time-ranges.ts): few rows to add up at any range.
-- Rows with dataset_id 0 hold the totals over all datasets (the common unfiltered view), rows with
-- dataset_id -<catalog id> the totals of a catalog (the catalog filter). Every writer updates
-- them: concurrent imports into the same periods queue on those rows until commit, so an import
-- should commit batch by batch rather than hold one transaction across batches.
create table event_counts (
  grain "char" not null check (grain in ('y', 'm', 'd')),
  period timestamptz not null,
  dataset_id bigint not null,
  catalog_id bigint not null,
  event_count integer not null,
  primary key (grain, period, dataset_id)
);

-- Located events per dataset, UTC year or month, and level-10 cell (~39 km at the equator): counts
-- and coordinate sums (for centroids), for map views up to zoom 8 and counts within bounds.
create table event_cell_counts (
  grain "char" not null check (grain in ('y', 'm')),
  period timestamptz not null,
  dataset_id bigint not null,
  catalog_id bigint not null,
  cell_x integer not null,
  cell_y integer not null,
  event_count integer not null,
  sum_lon float8 not null,
  sum_lat float8 not null,
  primary key (grain, period, dataset_id, cell_x, cell_y)
);

-- The counts follow every change to events through statement-level triggers with transition
-- tables: one aggregated upsert per table and statement, whoever writes. Keys are upserted in key
-- order so that concurrent writers wait on each other rather than deadlock.
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
      insert into event_counts as r (grain, period, dataset_id, catalog_id, event_count)
      select p.grain, p.period, case when grouping(e.dataset_id) = 0 then e.dataset_id
                  when grouping(e.catalog_id) = 0 then -e.catalog_id else 0 end,
             case when grouping(e.dataset_id) = 1 and grouping(e.catalog_id) = 1 then 0 else min(e.catalog_id) end, %1$s * count(*)
      from %2$I e cross join lateral (values
        ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
        ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC')),
        ('d'::"char", date_trunc('day', e.event_timestamp, 'UTC'))) as p(grain, period)
      group by grouping sets ((p.grain, p.period, e.dataset_id), (p.grain, p.period, e.catalog_id), (p.grain, p.period)) order by 1, 2, 3
      on conflict (grain, period, dataset_id) do update
        set event_count = r.event_count + excluded.event_count, catalog_id = excluded.catalog_id
    $q$, sign, changed);
    execute format($q$
      insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
      select p.grain, p.period, case when grouping(e.dataset_id) = 0 then e.dataset_id
                  when grouping(e.catalog_id) = 0 then -e.catalog_id else 0 end,
             case when grouping(e.dataset_id) = 1 and grouping(e.catalog_id) = 1 then 0 else min(e.catalog_id) end, e.grid_x >> 14, e.grid_y >> 14,
             %1$s * count(*), %1$s * sum(st_x(e.location)), %1$s * sum(st_y(e.location))
      from %2$I e cross join lateral (values
        ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
        ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC'))) as p(grain, period)
      where e.location is not null
      group by grouping sets ((p.grain, p.period, e.dataset_id, e.grid_x >> 14, e.grid_y >> 14),
                              (p.grain, p.period, e.catalog_id, e.grid_x >> 14, e.grid_y >> 14),
                              (p.grain, p.period, e.grid_x >> 14, e.grid_y >> 14))
      order by 1, 2, 3, 5, 6
      on conflict (grain, period, dataset_id, cell_x, cell_y) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat,
            catalog_id = excluded.catalog_id
    $q$, sign, changed);
    if sign < 0 then
      -- Only the keys this statement touched, so that deleting a few events stays cheap.
      execute format($q$
        delete from event_counts r
        using (select distinct d.dataset_id, p.grain, p.period
               from %1$I e cross join unnest(array[e.dataset_id, -e.catalog_id, 0]) as d(dataset_id) cross join lateral (values
                 ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
                 ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC')),
                 ('d'::"char", date_trunc('day', e.event_timestamp, 'UTC'))) as p(grain, period)) k
        where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id and r.event_count <= 0
      $q$, changed);
      execute format($q$
        delete from event_cell_counts r
        using (select distinct d.dataset_id, p.grain, p.period, e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y
               from %1$I e cross join unnest(array[e.dataset_id, -e.catalog_id, 0]) as d(dataset_id) cross join lateral (values
                 ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
                 ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC'))) as p(grain, period)
               where e.location is not null) k
        where r.grain = k.grain and r.period = k.period and r.dataset_id = k.dataset_id
          and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
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
  truncate event_counts, event_cell_counts;
  return null;
end $$;
create trigger events_counts_truncate after truncate on events
  for each statement execute function chronomap_event_counts_truncate();

-- Events stored before this migration.
insert into event_counts (grain, period, dataset_id, catalog_id, event_count)
select p.grain, p.period, case when grouping(e.dataset_id) = 0 then e.dataset_id
                  when grouping(e.catalog_id) = 0 then -e.catalog_id else 0 end,
       case when grouping(e.dataset_id) = 1 and grouping(e.catalog_id) = 1 then 0 else min(e.catalog_id) end, count(*)
from events e cross join lateral (values
  ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
  ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC')),
  ('d'::"char", date_trunc('day', e.event_timestamp, 'UTC'))) as p(grain, period)
group by grouping sets ((p.grain, p.period, e.dataset_id), (p.grain, p.period, e.catalog_id), (p.grain, p.period));
insert into event_cell_counts (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
select p.grain, p.period, case when grouping(e.dataset_id) = 0 then e.dataset_id
                  when grouping(e.catalog_id) = 0 then -e.catalog_id else 0 end,
       case when grouping(e.dataset_id) = 1 and grouping(e.catalog_id) = 1 then 0 else min(e.catalog_id) end, e.grid_x >> 14, e.grid_y >> 14,
       count(*), sum(st_x(e.location)), sum(st_y(e.location))
from events e cross join lateral (values
  ('y'::"char", date_trunc('year', e.event_timestamp, 'UTC')),
  ('m'::"char", date_trunc('month', e.event_timestamp, 'UTC'))) as p(grain, period)
where e.location is not null
group by grouping sets ((p.grain, p.period, e.dataset_id, e.grid_x >> 14, e.grid_y >> 14),
                        (p.grain, p.period, e.catalog_id, e.grid_x >> 14, e.grid_y >> 14),
                        (p.grain, p.period, e.grid_x >> 14, e.grid_y >> 14));

-- Custom date fields declared by a dataset (schema_settings.dateFields, e.g. ["startDate"]) are
-- filtered with this cast, which turns unparseable values into null instead of failing the query.
create function chronomap_try_timestamptz(value text) returns timestamptz
  language plpgsql stable parallel safe as $$
begin
  return value::timestamptz;
exception when others then
  return null;
end $$;
