-- Provenance per event (issue 38 §5): each event keeps the import job that stored (or last changed)
-- its content and the data row it came from (1-based, after the header; the sheet is the job's).
-- Both are written by the create-events stage in the statement that stores the batch
-- (src/adapters/postgres/ingest/event-store.ts); events stored another way (the demo seed, the
-- admin REST collection) have none. No foreign key: a removed job leaves the row number and the
-- times, and no check per inserted event.
alter table events add column ingest_job_id bigint, add column source_row integer;

-- What an ingest file was made from: the SHA-256 of its bytes, computed while the FileStore wrote
-- them; for a URL import the URL with its credentials and secret-looking parameters redacted
-- (redactSourceUrl), when it was fetched and the server's validators (ETag, Last-Modified).
alter table ingest_files
  add column sha256 text check (sha256 is null or sha256 ~ '^[0-9a-f]{64}$'),
  add column source_url text,
  add column fetched_at timestamptz,
  add column etag text,
  add column last_modified text;
-- A wizard upload waits as a draft: its hash is kept until the import starts.
alter table ingest_drafts add column sha256 text check (sha256 is null or sha256 ~ '^[0-9a-f]{64}$');

-- The commit a git scraper's run ran, as the runner reports it; and the run of an auto-imported file.
alter table scraper_runs add column commit_sha text check (commit_sha is null or commit_sha ~ '^[0-9a-f]{40,64}$');
create index scraper_runs_ingest_file_idx on scraper_runs (ingest_file_id) where ingest_file_id is not null;

-- The dataset owner's choice: a public provenance page and field (true), or nothing beyond the dataset.
alter table datasets add column provenance_public boolean not null default true;
