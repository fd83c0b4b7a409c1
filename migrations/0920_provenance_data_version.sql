-- Hiding or showing a dataset's provenance (datasets.provenance_public, 0890) changes what every
-- export and list of its events says (provenance-sql.ts), but not its events: without a bump, a
-- materialised export file or a cached answer keyed by the data version (0240) would keep handing
-- out the provenance the owner has just hidden. A trigger per changed row of the small datasets
-- table; nothing is rewritten.

create function chronomap_bump_provenance_data_version() returns trigger
language plpgsql as $$
begin
  insert into dataset_data_versions (dataset_id, version) values (new.id, 1)
  on conflict (dataset_id) do update set version = dataset_data_versions.version + 1;
  return null;
end;
$$;

create trigger datasets_provenance_data_version after update of provenance_public on datasets
  for each row when (old.provenance_public is distinct from new.provenance_public)
  execute function chronomap_bump_provenance_data_version();
