-- The read API's listings (/api/v1/data-sources, OGC /collections) leave out a dataset whose imports
-- all failed before storing an event (src/adapters/postgres/read/sources.ts#LISTED_DATASET); they
-- look up a dataset's import jobs on every call, so by an index rather than a scan of every job.
create index ingest_jobs_dataset_idx on ingest_jobs (dataset_id, stage);
