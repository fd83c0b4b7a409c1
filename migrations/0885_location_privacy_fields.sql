-- Location privacy (issue 38 §4), the event's data: an imported row keeps every column in `data`,
-- the ones its location was read from included (latitude, longitude, coordinates, the address
-- columns), so a generalised location alone would still let anyone read the exact one from `data`.
-- `datasets.location_fields` names those columns, over every schema version of the dataset (their
-- `mapping`: a column name, a list, or an address template "{city}, {country}"); readers without
-- write access to a dataset with privacy get `data - location_fields`
-- (src/adapters/postgres/read/private-locations.ts). Kept by a trigger on the schema versions.

alter table datasets add column location_fields text[] not null default '{}';

create function chronomap_mapping_location_fields(mapping jsonb) returns text[]
language sql immutable parallel safe as $$
  select coalesce(array_agg(distinct f), '{}') from (
    select mapping->>'latitude' as f
    union all select mapping->>'longitude'
    union all select mapping->>'coordinates'
    union all select jsonb_array_elements_text(case when jsonb_typeof(mapping->'address') = 'array'
                                                    then mapping->'address' else '[]'::jsonb end)
    union all select case when jsonb_typeof(mapping->'address') = 'string'
                            and mapping->>'address' !~ '\{[^{}]+\}' then mapping->>'address' end
    union all select (regexp_matches(case when jsonb_typeof(mapping->'address') = 'string'
                                          then mapping->>'address' else '' end, '\{([^{}]{1,200})\}', 'g'))[1]
  ) s where f is not null and f <> ''
$$;

create function chronomap_refresh_location_fields() returns trigger language plpgsql as $$
begin
  update datasets d set location_fields = coalesce((
      select array_agg(distinct f order by f)
      from dataset_schema_versions v, unnest(chronomap_mapping_location_fields(v.mapping)) f
      where v.dataset_id = d.id), '{}')
  where d.id in (select distinct dataset_id from changed);
  return null;
end $$;

create trigger dataset_schema_versions_location_fields_insert after insert on dataset_schema_versions
  referencing new table as changed for each statement execute function chronomap_refresh_location_fields();
create trigger dataset_schema_versions_location_fields_update after update on dataset_schema_versions
  referencing new table as changed for each statement execute function chronomap_refresh_location_fields();

update datasets d set location_fields = coalesce((
    select array_agg(distinct f order by f)
    from dataset_schema_versions v, unnest(chronomap_mapping_location_fields(v.mapping)) f
    where v.dataset_id = d.id), '{}')
where exists (select 1 from dataset_schema_versions v where v.dataset_id = d.id);
