-- Ingestion write path: events had two foreign keys, dataset_id -> datasets and catalog_id ->
-- catalogs, each checked by a per-row trigger (about 1.2 s per 100,000 inserted rows together).
-- One composite key (dataset_id, catalog_id) -> datasets (id, catalog_id) is one check per row and
-- says more: an event's catalog is its dataset's catalog, the denormalisation the catalog filters
-- rely on. Until now nothing kept it so when a dataset moved to another catalog (PATCH of the
-- dataset's `catalog`): its events kept the old catalog_id. ON UPDATE CASCADE moves them with it
-- (an UPDATE of those events, so the count triggers move their counts too). Deleting a catalog
-- still deletes its datasets, and deleting a dataset its events.

-- Events left behind by a dataset that moved before this migration.
update events e set catalog_id = d.catalog_id
from datasets d
where d.id = e.dataset_id and e.catalog_id <> d.catalog_id;

alter table datasets add constraint datasets_id_catalog_id_key unique (id, catalog_id);

alter table events
  drop constraint events_dataset_id_fkey,
  drop constraint events_catalog_id_fkey,
  add constraint events_dataset_catalog_fkey foreign key (dataset_id, catalog_id)
    references datasets (id, catalog_id) on delete cascade on update cascade;
