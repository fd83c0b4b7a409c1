-- Ingestion: an import whose counts are deferred stores two batches at once, on two connections,
-- committing them in file order (src/application/ingest/run-ingest-job.ts, create-events). The
-- per-statement bump of the dataset's data version (0240) would make them take turns wrongly: the
-- later batch's INSERT, finishing first, would lock the dataset's version row until it commits, which
-- it only does after the earlier batch, whose INSERT then waits for that row: a wait PostgreSQL
-- cannot see through (the later batch waits in the client), so no deadlock would be detected.
--
-- So a transaction may take the bump of its inserts upon itself: with the transaction-local
-- setting `chronomap.bump_data_version_later` on, the INSERT trigger leaves the version alone and
-- the transaction raises it itself before it commits (src/adapters/postgres/ingest-store.ts,
-- commitEventBatch, once the batch before has committed). The version still changes in the
-- transaction that changes the rows, which is all the answer cache relies on. Updates and deletes
-- bump as before.

create or replace function chronomap_bump_data_versions() returns trigger
language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    if current_setting('chronomap.bump_data_version_later', true) = 'on' then
      return null;
    end if;
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
