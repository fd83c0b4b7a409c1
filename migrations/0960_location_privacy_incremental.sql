-- Location privacy at import scale (issue 38 §4). Migration 0880 recomputed the generalised
-- location of every event of a private dataset after each statement that wrote any of its events:
-- an import of n events in batches of b cost n²/b, all of it on the import's connection. Now:
--
-- - A write recomputes only the cells it touched (the cells of the points it inserted, deleted, or
--   moved from and to): k counts events per cell over the whole dataset, so no other cell's count
--   changes. The events of a cell are found through the location index (events_location_idx) in a
--   box one cell wide around its centre (which holds every point whose cell it is, the clamped
--   cells at the poles and the antimeridian included) and then by the exact cell function.
-- - A bulk import into an empty dataset (counts_pending, migration 0330) writes no generalised
--   locations at all while it runs: its events have none (so readers without write access see none
--   of their locations, the safe side), and the deferred refresh that adds its counts recomputes the
--   dataset once, in the same transaction that clears the flag
--   (src/adapters/postgres/ingest/ingest-datasets.ts, refreshDatasetCounts). Writers and that
--   refresh serialize on the dataset row as for the counts (chronomap_lock_pending_datasets): a
--   writer that skipped committed before the refresh reads; one that waited sees the flag cleared
--   and recomputes its cells itself.
--
-- A change of the settings still recomputes the whole dataset (chronomap_refresh_public_locations,
-- migration 0880, unchanged). Nothing is rewritten here: only functions and triggers are replaced.

-- The generalised locations of the events of `target` in `cells` (cell centres of
-- chronomap_privacy_cell at `metres`), from the counts of those cells; only rows that change.
create function chronomap_refresh_public_cells(target bigint, metres integer, k integer, cells geometry[])
returns void
language plpgsql as $$
begin
  update events e set public_location = m.generalised
  from (select x.id, case when count(*) over (partition by x.cx, x.cy) >= k then x.cell end as generalised
        from (select v.id, c.cell, st_x(c.cell) as cx, st_y(c.cell) as cy
              from unnest(cells) as c(cell)
              join events v
                on v.dataset_id = target
               and v.location && st_expand(c.cell,
                                           least(360.0, metres / (111320.0 * greatest(cos(radians(st_y(c.cell))), 0.000001))),
                                           metres / 111320.0)
              cross join lateral (select chronomap_privacy_cell(st_x(v.location), st_y(v.location), metres) as own) o
              where st_x(o.own) = st_x(c.cell) and st_y(o.own) = st_y(c.cell)) x) m
  where e.id = m.id and e.public_location is distinct from m.generalised;
end;
$$;

create or replace function chronomap_public_locations_trigger() returns trigger
language plpgsql as $$
declare
  ds bigint[];
  cs geometry[];
  touched bigint[];
  pending bigint[];
  target bigint;
begin
  if pg_trigger_depth() > 1 then
    return null;
  end if;
  -- The cells a write added points to or took them from, in private datasets, as (ds[i], cs[i]).
  -- An update counts only the rows whose point or dataset changed, from both sides.
  if tg_op in ('INSERT', 'DELETE') then
    -- One query for both: the transition table is named by the operation.
    execute format($q$
      select array_agg(x.dataset_id), array_agg(x.cell)
      from (select distinct w.dataset_id,
                   chronomap_privacy_cell(st_x(w.location), st_y(w.location), d.privacy_cell_metres) as cell
            from %I w join datasets d on d.id = w.dataset_id
            where d.privacy_cell_metres is not null and w.location is not null) x$q$,
      case tg_op when 'INSERT' then 'new_events' else 'old_events' end)
    into ds, cs;
  else
    -- A row whose point is gone, or whose dataset has no privacy, has no generalised location.
    update events e set public_location = null
    from new_events n join datasets d on d.id = n.dataset_id
    where e.id = n.id and n.public_location is not null
      and (n.location is null or d.privacy_cell_metres is null);
    select array_agg(x.dataset_id), array_agg(x.cell) into ds, cs
    from (select distinct p.dataset_id,
                 chronomap_privacy_cell(st_x(p.location), st_y(p.location), d.privacy_cell_metres) as cell
          from old_events o join new_events n on n.id = o.id
          cross join lateral (values (o.dataset_id, o.location), (n.dataset_id, n.location)) p(dataset_id, location)
          join datasets d on d.id = p.dataset_id
          where d.privacy_cell_metres is not null and p.location is not null
            and (o.location is distinct from n.location or o.dataset_id <> n.dataset_id)) x;
  end if;
  if ds is null then
    return null;
  end if;
  touched := array(select distinct u from unnest(ds) u order by u);
  -- Datasets under a deferred bulk import: their refresh recomputes them whole.
  pending := chronomap_lock_pending_datasets(touched);
  foreach target in array touched loop
    if not target = any(pending) then
      perform chronomap_refresh_public_cells(
        target, d.privacy_cell_metres, d.privacy_min_count,
        array(select u.cell from unnest(ds, cs) as u(dataset_id, cell) where u.dataset_id = target))
      from datasets d where d.id = target;
    end if;
  end loop;
  return null;
end;
$$;

drop trigger events_public_locations_update on events;
create trigger events_public_locations_update after update on events
  referencing old table as old_events new table as new_events
  for each statement execute function chronomap_public_locations_trigger();
drop trigger events_public_locations_insert on events;
create trigger events_public_locations_insert after insert on events
  referencing new table as new_events for each statement execute function chronomap_public_locations_trigger();
drop trigger events_public_locations_delete on events;
create trigger events_public_locations_delete after delete on events
  referencing old table as old_events for each statement execute function chronomap_public_locations_trigger();
