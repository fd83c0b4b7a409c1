-- Ingestion: an import whose counts are deferred stores two batches at once, on two connections,
-- committing them in file order (src/application/ingest/run-ingest-job.ts, create-events). The
-- per-statement bump of the dataset's data version (0240) would make them take turns the wrong way
-- round: the later batch's INSERT, ending first, would lock the dataset's version row until it
-- commits, which it does only after the earlier batch, whose INSERT then waits for that row. That
-- wait goes through the client (the later batch waits there for the earlier one's commit), so
-- PostgreSQL would see no deadlock.
--
-- So a transaction may take the bump of its inserts upon itself: with the transaction-local setting
-- `chronomap.bump_data_version_later` on, the INSERT trigger leaves the version alone and the
-- transaction raises it before it commits (src/adapters/postgres/ingest-store.ts, commitEventBatch,
-- once the batch before has committed). The version still changes in the transaction that changes
-- the rows, which is all the answer cache relies on. Updates and deletes bump as before (0240's
-- function, whose INSERT branch this trigger no longer calls).

create function chronomap_bump_data_versions_on_insert() returns trigger
language plpgsql as $$
begin
  if current_setting('chronomap.bump_data_version_later', true) is distinct from 'on' then
    insert into dataset_data_versions (dataset_id, version)
    select distinct dataset_id, 1 from new_events order by dataset_id
    on conflict (dataset_id) do update set version = dataset_data_versions.version + 1;
  end if;
  return null;
end;
$$;

drop trigger events_data_versions_insert on events;
create trigger events_data_versions_insert after insert on events
  referencing new table as new_events for each statement execute function chronomap_bump_data_versions_on_insert();
