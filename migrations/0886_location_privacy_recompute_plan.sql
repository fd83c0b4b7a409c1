-- The recompute of a dataset's generalised locations (migration 0880) joined its events to their
-- computed cells by a nested loop when the statistics were stale (right after an import, exactly
-- when it runs): the planner took both sides for one row and rescanned the window query per event,
-- 42 s for 2,000 events and 168 s for 4,000 (quadratic). Planned without nested loops, the join is a
-- hash join whatever the estimates: linear. The setting holds inside this function only.

create or replace function chronomap_refresh_public_locations(target bigint) returns void
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
