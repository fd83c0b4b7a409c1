-- Read API: located events per level-10 cell (as event_cell_counts) and UTC day, over all datasets
-- only (the unfiltered view: the map and the timeline as most callers ask for them). The month
-- counts of 0200 leave the partial months to the rows: the ends of a date window over a
-- continent-sized box (a map at zoom 4-6 with a window read a month or two of the box's rows), and
-- the months a day-aligned histogram bin boundary cuts (a city's timeline read every row in the
-- box). From here, only the partial days at a window's ends and the box's edge cells are rows.
--
-- Totals only, to keep the cost per insert to one aggregated upsert (as 0210): filtered views keep
-- reading rows for their partial months. The key leads with the cell, so that a box reads a day
-- range per occupied cell (a day-first key would read every cell of the world for each day).

create table event_cell_day_counts (
  cell_x integer not null,
  cell_y integer not null,
  day timestamptz not null,
  event_count integer not null,
  sum_lon float8 not null,
  sum_lat float8 not null,
  primary key (cell_x, cell_y, day)
);

-- Statement-level, with transition tables: one aggregated upsert per statement, in key order so
-- that concurrent writers queue rather than deadlock. UPDATE subtracts the old rows, then adds the
-- new ones; keys left at zero are deleted (only those the statement touched).
create function chronomap_event_cell_day_counts_trigger() returns trigger
  language plpgsql as $$
declare
  changed text;
begin
  foreach changed in array case tg_op when 'INSERT' then array['new_events']
                                      when 'DELETE' then array['old_events']
                                      else array['old_events', 'new_events'] end loop
    if changed = 'new_events' then
      insert into event_cell_day_counts as r (cell_x, cell_y, day, event_count, sum_lon, sum_lat)
      select e.grid_x >> 14, e.grid_y >> 14, date_trunc('day', e.event_timestamp, 'UTC'),
             count(*), sum(st_x(e.location)), sum(st_y(e.location))
      from new_events e
      where e.location is not null
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
      where e.location is not null
      group by 1, 2, 3
      order by 1, 2, 3
      on conflict (cell_x, cell_y, day) do update
        set event_count = r.event_count + excluded.event_count,
            sum_lon = r.sum_lon + excluded.sum_lon,
            sum_lat = r.sum_lat + excluded.sum_lat;
      delete from event_cell_day_counts r
      using (select distinct e.grid_x >> 14 as cell_x, e.grid_y >> 14 as cell_y,
                    date_trunc('day', e.event_timestamp, 'UTC') as day
             from old_events e where e.location is not null) k
      where r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.day = k.day and r.event_count <= 0;
    end if;
  end loop;
  return null;
end $$;

create trigger events_cell_day_counts_insert after insert on events
  referencing new table as new_events for each statement execute function chronomap_event_cell_day_counts_trigger();
create trigger events_cell_day_counts_update after update on events
  referencing old table as old_events new table as new_events
  for each statement execute function chronomap_event_cell_day_counts_trigger();
create trigger events_cell_day_counts_delete after delete on events
  referencing old table as old_events for each statement execute function chronomap_event_cell_day_counts_trigger();

create function chronomap_event_cell_day_counts_truncate() returns trigger
  language plpgsql as $$
begin
  truncate event_cell_day_counts;
  return null;
end $$;
create trigger events_cell_day_counts_truncate after truncate on events
  for each statement execute function chronomap_event_cell_day_counts_truncate();

-- Events stored before this migration.
insert into event_cell_day_counts (cell_x, cell_y, day, event_count, sum_lon, sum_lat)
select grid_x >> 14, grid_y >> 14, date_trunc('day', event_timestamp, 'UTC'),
       count(*), sum(st_x(location)), sum(st_y(location))
from events
where location is not null
group by 1, 2, 3;
