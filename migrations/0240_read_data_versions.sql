-- A number per dataset that every change to its events raises, in the changing transaction: the
-- /api/v1/events answer cache (src/adapters/postgres/page-cache.ts) stores each answer with the
-- versions of the datasets it read, taken in the same statement (so the same snapshot) as the
-- answer, and serves it again only while a fresh read of those versions (and of the scope version
-- of migration 0230, for datasets and catalogs themselves) gives the same numbers.
--
-- Statement-level triggers with transition tables: one upsert per statement, of each dataset the
-- statement touched, in dataset order (so two writers lock the rows in the same order and cannot
-- deadlock on them). Versions only grow and rows are never deleted (no foreign key: a dataset's
-- delete cascades to its events, whose trigger then raises the version of a dataset already gone),
-- so the sum of the versions over a fixed set of datasets changes whenever one of them does.

create table dataset_data_versions (
  dataset_id bigint primary key,
  version bigint not null
);

create function chronomap_bump_data_versions() returns trigger
language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into dataset_data_versions (dataset_id, version)
    select distinct dataset_id, 1 from new_events order by dataset_id
    on conflict (dataset_id) do update set version = dataset_data_versions.version + 1;
  elsif tg_op = 'DELETE' then
    insert into dataset_data_versions (dataset_id, version)
    select distinct dataset_id, 1 from old_events order by dataset_id
    on conflict (dataset_id) do update set version = dataset_data_versions.version + 1;
  else
    insert into dataset_data_versions (dataset_id, version)
    select dataset_id, 1 from (select dataset_id from old_events union select dataset_id from new_events) t
    order by dataset_id
    on conflict (dataset_id) do update set version = dataset_data_versions.version + 1;
  end if;
  return null;
end;
$$;

create trigger events_data_versions_insert after insert on events
  referencing new table as new_events for each statement execute function chronomap_bump_data_versions();
create trigger events_data_versions_update after update on events
  referencing old table as old_events new table as new_events
  for each statement execute function chronomap_bump_data_versions();
create trigger events_data_versions_delete after delete on events
  referencing old table as old_events for each statement execute function chronomap_bump_data_versions();

create function chronomap_bump_all_data_versions() returns trigger
language plpgsql as $$
begin
  -- A dataset without a row has had no events since this migration, so truncate changed nothing of it.
  update dataset_data_versions set version = version + 1;
  return null;
end;
$$;

create trigger events_data_versions_truncate after truncate on events
  for each statement execute function chronomap_bump_all_data_versions();

-- Datasets that hold events already.
insert into dataset_data_versions (dataset_id, version)
select id, 1 from datasets where exists (select from events e where e.dataset_id = datasets.id);
