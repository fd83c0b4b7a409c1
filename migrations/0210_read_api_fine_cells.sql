-- Read API: located events per level-16 Web Mercator cell (~600 m at the equator, ~400 m at 50°),
-- over all datasets and all time, for the unfiltered map views at zoom 9-13 (grid levels 11-16),
-- where the level-10 counts of 0200 are too coarse and a city view holds tens of thousands of
-- events at 1M (hundreds of thousands at 10M). Views with a dataset, catalog or date filter, or
-- with datasets the caller may not see, still read the rows.
--
-- Like 0200: the cells wholly inside a view come from here, the edge cells from the rows; counts
-- and coordinate sums give the same counts and centroids as the rows. `ids` lists the cell's
-- events while it holds ten or fewer (a cluster of ten or fewer lists its ids); it is null when
-- the cell holds more, and may be incomplete after deletes, which the reader detects (fewer ids
-- than events) and then reads that cell's rows.

create table event_fine_cell_counts (
  cell_x integer not null,
  cell_y integer not null,
  event_count integer not null,
  sum_lon float8 not null,
  sum_lat float8 not null,
  ids bigint[],
  primary key (cell_x, cell_y)
);

-- Statement-level, with transition tables: one aggregated upsert per statement (the cells it
-- touched, in key order so that concurrent writers queue rather than deadlock). UPDATE subtracts
-- the old rows, then adds the new ones.
create function chronomap_event_fine_counts_trigger() returns trigger
  language plpgsql as $$
declare
  changed text;
begin
  foreach changed in array case tg_op when 'INSERT' then array['new_events']
                                      when 'DELETE' then array['old_events']
                                      else array['old_events', 'new_events'] end loop
    if changed = 'new_events' then
      insert into event_fine_cell_counts as r (cell_x, cell_y, event_count, sum_lon, sum_lat, ids)
      select e.grid_x >> 8, e.grid_y >> 8, count(*), sum(st_x(e.location)), sum(st_y(e.location)),
             case when count(*) <= 10 then array_agg(e.id) end
      from new_events e
      where e.location is not null
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
      where e.location is not null
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
             from old_events e where e.location is not null) k
      where r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0;
    end if;
  end loop;
  return null;
end $$;

create trigger events_fine_counts_insert after insert on events
  referencing new table as new_events for each statement execute function chronomap_event_fine_counts_trigger();
create trigger events_fine_counts_update after update on events
  referencing old table as old_events new table as new_events
  for each statement execute function chronomap_event_fine_counts_trigger();
create trigger events_fine_counts_delete after delete on events
  referencing old table as old_events for each statement execute function chronomap_event_fine_counts_trigger();

create function chronomap_event_fine_counts_truncate() returns trigger
  language plpgsql as $$
begin
  truncate event_fine_cell_counts;
  return null;
end $$;
create trigger events_fine_counts_truncate after truncate on events
  for each statement execute function chronomap_event_fine_counts_truncate();

-- Events stored before this migration.
insert into event_fine_cell_counts (cell_x, cell_y, event_count, sum_lon, sum_lat, ids)
select grid_x >> 8, grid_y >> 8, count(*), sum(st_x(location)), sum(st_y(location)),
       case when count(*) <= 10 then array_agg(id) end
from events
where location is not null
group by 1, 2;
