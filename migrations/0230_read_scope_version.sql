-- A number every change to datasets or catalogs raises, in the changing transaction. /api/v1/events
-- remembers which datasets a caller and filter may read together with this number (read in one
-- statement, so in one snapshot) and checks the number inside each page's statement instead of
-- resolving the datasets again: equal, nothing that decides visibility changed in between.
-- Statement-level, so a bulk change raises it once; writers to datasets and catalogs (rare: an
-- import creating its dataset, the dashboard) queue on this one row until they commit.

create table chronomap_read_scope_version (
  only_row boolean primary key default true check (only_row),
  version bigint not null
);

insert into chronomap_read_scope_version (version) values (0);

create function chronomap_bump_read_scope_version() returns trigger
language plpgsql as $$
begin
  update chronomap_read_scope_version set version = version + 1;
  return null;
end;
$$;

create trigger datasets_read_scope_version
  after insert or update or delete or truncate on datasets
  for each statement execute function chronomap_bump_read_scope_version();

create trigger catalogs_read_scope_version
  after insert or update or delete or truncate on catalogs
  for each statement execute function chronomap_bump_read_scope_version();
