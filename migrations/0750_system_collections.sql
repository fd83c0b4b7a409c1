-- Catalogs and datasets the service itself creates (the demo catalog and dataset of
-- `chronomap seed-demo`) are found by a key that no user can set, never by a slug: dataset slugs are
-- unique across catalogs, so a user's import of the same file could take the demo's slug, and
-- seed-demo then wrote into that user's private dataset (issue 28 §7).
alter table catalogs add column system_key text unique;
alter table datasets add column system_key text unique;

-- Installations seeded before this migration: the demo rows seed-demo made have no owner.
update catalogs set system_key = 'demo' where slug = 'demo' and created_by is null;
update datasets d set system_key = 'demo/usgs-earthquakes'
  from catalogs c
  where c.id = d.catalog_id and c.system_key = 'demo' and d.slug = 'usgs-earthquakes' and d.created_by is null;
