-- Two rollups of each dataset's level-10 month rows, the rows the count model keeps per dataset
-- (issue 37 §2; docs/scaling.md, "The count model that does not outgrow the events", step 2).
--
-- Each dataset's extent as whole level-10 cells. OGC API – Features' /collections
-- gives every readable dataset's extent (src/adapters/postgres/read/dataset-extents.ts); until this
-- migration it took the first and last cell column and row of the dataset's year rows in
-- event_cell_counts, 123-145 ms for the 20 datasets of 1M real-shaped events. The datasets' year
-- rows are to stop being written (the count model keeps the datasets' month rows only), and the
-- month rows took 267-284 ms.
--
-- And the datasets' all-time cells: grain 'a' of event_cell_counts for dataset_id > 0, per dataset
-- and level-10 cell every event of all time, as 0963 keeps them for the totals and each catalog. An
-- undated view of some datasets, or a breakdown by dataset, reads these instead of the dataset's
-- year rows (readsAllTimeCells): on 1M real-shaped events in 20 datasets, 301,886 cells against
-- 636,215 year rows, and the year rows are to go.
--
-- The margins: per dataset, how many of its located events lie in each column (axis 'x') and each
-- row (axis 'y') of level-10 cells. The extent is the first and last column and row still holding
-- events: four probes of the key per dataset. Kept as sums, not as a box, so that a delete or an
-- update that empties the edge column narrows the extent without recounting anything: a column's
-- row goes when its count reaches zero, as the cell rows do (0330). At most 2,048 rows per dataset.
create table dataset_cell_margins (
  dataset_id bigint not null,
  axis "char" not null check (axis in ('x', 'y')),
  cell integer not null,
  event_count bigint not null,
  primary key (dataset_id, axis, cell)
);

-- Both kept from the datasets' level-10 month rows by a trigger on event_cell_counts itself, as the
-- derived cells of 0963 are, so that every writer keeps them right: the events' statement triggers,
-- the deferred refresh, and the previous release's copies of both while an upgrade runs
-- (docs/upgrading.md). A statement's changes are summed per (dataset, axis, cell) first, and the
-- upserts run in key order, so that two writers of one dataset queue rather than deadlock.
create function chronomap_dataset_derived_cells_trigger() returns trigger
  language plpgsql
  set work_mem = '64MB'
  as $$
declare
  changes text;
  months boolean;
begin
  changes := case tg_op
    when 'INSERT' then
      $s$select dataset_id, catalog_id, cell_x, cell_y, event_count::int8 as n, sum_lon as lon, sum_lat as lat
         from new_rows where grain = 'm' and dataset_id > 0$s$
    when 'DELETE' then
      $s$select dataset_id, catalog_id, cell_x, cell_y, -event_count::int8 as n, -sum_lon as lon, -sum_lat as lat
         from old_rows where grain = 'm' and dataset_id > 0$s$
    else
      $s$select dataset_id, catalog_id, cell_x, cell_y, event_count::int8 as n, sum_lon as lon, sum_lat as lat
         from new_rows where grain = 'm' and dataset_id > 0
         union all
         select dataset_id, catalog_id, cell_x, cell_y, -event_count::int8, -sum_lon, -sum_lat
         from old_rows where grain = 'm' and dataset_id > 0$s$
    end;
  -- The upsert of all-time rows below writes into this same table, which calls this function again
  -- with no month rows (an insert of no rows fires statement triggers too): without this test it
  -- would call itself without end.
  execute format('select exists (select 1 from (%s) c)', changes) into months;
  if not months then
    return null;
  end if;

  -- Columns and rows summed apart (two small groupings of the changes, 0.44-0.55 s for 317,094
  -- month rows, against 0.77-1.09 s for one grouping of both, sorted, in the same transaction).
  execute format($q$
    insert into dataset_cell_margins as r (dataset_id, axis, cell, event_count)
    select * from (
      select c.dataset_id, 'x'::"char", c.cell_x, sum(c.n) as n from (%1$s) c group by c.dataset_id, c.cell_x
      union all
      select c.dataset_id, 'y'::"char", c.cell_y, sum(c.n) from (%1$s) c group by c.dataset_id, c.cell_y) k
    where k.n <> 0
    order by 1, 2, 3
    on conflict (dataset_id, axis, cell) do update set event_count = r.event_count + excluded.event_count
  $q$, changes);

  -- The datasets' all-time cells (grain 'a', as the totals' and catalogs' of 0963).
  execute format($q$
    insert into event_cell_counts as r (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
    select 'a', '-infinity', c.dataset_id,
           -- The dataset's catalog now: a move to another catalog updates its events, whose month
           -- rows then carry the old catalog (removed) and the new one (added).
           coalesce((select d.catalog_id from datasets d where d.id = c.dataset_id), max(c.catalog_id)),
           c.cell_x, c.cell_y, sum(c.n), sum(c.lon), sum(c.lat)
    from (%s) c
    group by c.dataset_id, c.cell_x, c.cell_y
    having sum(c.n) <> 0
    order by c.dataset_id, c.cell_x, c.cell_y
    on conflict (grain, period, dataset_id, cell_x, cell_y) do update
      set event_count = r.event_count + excluded.event_count,
          sum_lon = r.sum_lon + excluded.sum_lon,
          sum_lat = r.sum_lat + excluded.sum_lat,
          catalog_id = excluded.catalog_id
  $q$, changes);

  -- A column, row or cell whose last event went.
  if tg_op <> 'INSERT' then
    execute format($q$
      delete from dataset_cell_margins r
      using (select distinct c.dataset_id, a.axis, a.cell
             from (%s) c cross join lateral (values ('x'::"char", c.cell_x), ('y'::"char", c.cell_y)) a(axis, cell)) k
      where r.dataset_id = k.dataset_id and r.axis = k.axis and r.cell = k.cell and r.event_count <= 0
    $q$, changes);
    execute format($q$
      delete from event_cell_counts r
      using (select distinct dataset_id, cell_x, cell_y from (%s) c) k
      where r.grain = 'a' and r.period = '-infinity' and r.dataset_id = k.dataset_id
        and r.cell_x = k.cell_x and r.cell_y = k.cell_y and r.event_count <= 0
    $q$, changes);
  end if;
  return null;
end $$;

create function chronomap_dataset_derived_cells_truncate() returns trigger
  language plpgsql as $$
begin
  truncate dataset_cell_margins;
  return null;
end $$;

-- Creating the triggers locks event_cell_counts against writers until this migration commits, so
-- the backfill below races none of them.
create trigger event_cell_counts_dataset_derived_insert after insert on event_cell_counts
  referencing new table as new_rows
  for each statement execute function chronomap_dataset_derived_cells_trigger();
create trigger event_cell_counts_dataset_derived_update after update on event_cell_counts
  referencing old table as old_rows new table as new_rows
  for each statement execute function chronomap_dataset_derived_cells_trigger();
create trigger event_cell_counts_dataset_derived_delete after delete on event_cell_counts
  referencing old table as old_rows
  for each statement execute function chronomap_dataset_derived_cells_trigger();
create trigger event_cell_counts_dataset_derived_truncate after truncate on event_cell_counts
  for each statement execute function chronomap_dataset_derived_cells_truncate();

-- The counts stored before this migration.
insert into event_cell_counts (grain, period, dataset_id, catalog_id, cell_x, cell_y, event_count, sum_lon, sum_lat)
select 'a', '-infinity', k.dataset_id, d.catalog_id, k.cell_x, k.cell_y, sum(k.event_count), sum(k.sum_lon), sum(k.sum_lat)
from event_cell_counts k join datasets d on d.id = k.dataset_id
where k.grain = 'm' and k.dataset_id > 0
group by k.dataset_id, d.catalog_id, k.cell_x, k.cell_y
order by k.dataset_id, k.cell_x, k.cell_y;

insert into dataset_cell_margins (dataset_id, axis, cell, event_count)
select k.dataset_id, a.axis, a.cell, sum(k.event_count)
from event_cell_counts k cross join lateral (values ('x'::"char", k.cell_x), ('y'::"char", k.cell_y)) a(axis, cell)
where k.grain = 'm' and k.dataset_id > 0
group by k.dataset_id, a.axis, a.cell
order by 1, 2, 3;
