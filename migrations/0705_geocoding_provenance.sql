-- Issue 20: how each event was located. A geocoder's answer keeps what it matched (provider, name,
-- country, region) and whether it was refused for low confidence, in the cache and in a job's
-- answers; an event located by the geocoder keeps that record in located_by (null for an event whose
-- own coordinates located it, or that has no location).
alter table geocode_cache add column detail jsonb;
alter table ingest_job_geocodes add column detail jsonb;
alter table events add column located_by jsonb;
