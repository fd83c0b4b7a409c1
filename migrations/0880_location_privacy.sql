-- Location privacy per dataset (issue 38 §4). The owner sets a generalisation size (metres) and a
-- minimum count k; every event of such a dataset then stores, at write time, its generalised
-- location `public_location`: the centre of the grid cell of chronomap_privacy_cell its point falls
-- in, or null when that cell holds fewer than k of the dataset's events (the whole dataset's, not an
-- answer's) or the event has no location. Readers without write access to the dataset read only
-- this column (src/adapters/postgres/read/private-locations.ts).
--
-- The grid: latitude bands N metres high (N / 111 320 degrees), each band cut into cells N metres
-- wide at the band's centre latitude. Cells are about N x N metres on the ground at every latitude,
-- unlike a Web Mercator grid, whose N-"metre" cells are N/2 metres wide at 60 degrees: a grid that
-- shrinks towards the poles would reveal finer locations there than the owner asked for.

alter table datasets
  add column privacy_cell_metres integer check (privacy_cell_metres between 10 and 1000000),
  add column privacy_min_count integer not null default 1 check (privacy_min_count between 1 and 1000);

alter table events add column public_location geometry(Point, 4326);
create index events_public_location_idx on events using gist (public_location) where public_location is not null;

create function chronomap_privacy_cell(lon float8, lat float8, metres float8) returns geometry
language sql immutable parallel safe as $$
  select st_setsrid(st_makepoint(
           least(180.0, -180 + (floor((lon + 180) / w.width) + 0.5) * w.width),
           w.centre), 4326)
  from (select b.centre,
               least(360.0, metres / (111320.0 * greatest(cos(radians(b.centre)), 0.000001))) as width
        from (select greatest(-90.0, least(90.0, -90 + (floor((lat + 90) / (metres / 111320.0)) + 0.5)
                                                   * (metres / 111320.0))) as centre) b) w
$$;

-- The batched recompute of one dataset: every event's generalised location from the dataset's
-- current settings (null for all when the dataset has none), writing only the rows that change.
-- Planned without nested loops: with the stale statistics of a fresh import the planner joined the
-- events to their computed cells by a nested loop that reran the window query per event (42 s for
-- 2,000 events, 168 s for 4,000: quadratic); a hash join is linear whatever the estimates. The
-- setting holds inside this function only.
create function chronomap_refresh_public_locations(target bigint) returns void
language plpgsql
set enable_nestloop = off
as $$
declare
  metres integer;
  k integer;
begin
  select privacy_cell_metres, privacy_min_count into metres, k from datasets where id = target;
  if metres is null then
    update events set public_location = null where dataset_id = target and public_location is not null;
    return;
  end if;
  update events e set public_location = c.generalised
  from (select g.id,
               case when g.cell is not null and count(*) over (partition by st_x(g.cell), st_y(g.cell)) >= k
                    then g.cell end as generalised
        from (select v.id,
                     case when v.location is not null
                          then chronomap_privacy_cell(st_x(v.location), st_y(v.location), metres) end as cell
              from events v where v.dataset_id = target) g) c
  where e.id = c.id and e.dataset_id = target and e.public_location is distinct from c.generalised;
end;
$$;

-- Writes to events: one statement-level function (the transition tables are those the count
-- triggers already keep), recomputing each touched dataset that has privacy settings. Its own
-- update of public_location (trigger depth > 1) does nothing more.
create function chronomap_public_locations_trigger() returns trigger
language plpgsql as $$
declare
  target bigint;
begin
  if pg_trigger_depth() > 1 then
    return null;
  end if;
  for target in
    select d.id from datasets d
    where d.privacy_cell_metres is not null
      and d.id in (select dataset_id from changed_events)
    order by d.id
  loop
    perform chronomap_refresh_public_locations(target);
  end loop;
  return null;
end;
$$;

create trigger events_public_locations_insert after insert on events
  referencing new table as changed_events for each statement execute function chronomap_public_locations_trigger();
create trigger events_public_locations_update after update on events
  referencing new table as changed_events for each statement execute function chronomap_public_locations_trigger();
create trigger events_public_locations_delete after delete on events
  referencing old table as changed_events for each statement execute function chronomap_public_locations_trigger();

-- A change of the settings recomputes the dataset in the same transaction; the datasets update
-- also raises the read scope version (migration 0230), so tile URLs and cached pages change.
create function chronomap_privacy_settings_trigger() returns trigger
language plpgsql as $$
begin
  perform chronomap_refresh_public_locations(new.id);
  return null;
end;
$$;

create trigger datasets_privacy_settings after update of privacy_cell_metres, privacy_min_count on datasets
  for each row when (old.privacy_cell_metres is distinct from new.privacy_cell_metres
                     or old.privacy_min_count is distinct from new.privacy_min_count)
  execute function chronomap_privacy_settings_trigger();
