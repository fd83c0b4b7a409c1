-- Ingestion pipeline: uploaded (or fetched) files, one job per dataset or sheet, and the stored
-- record of each stage so that a restarted workflow skips completed tasks.

create table ingest_files (
  id bigint generated always as identity primary key,
  original_name text not null check (length(original_name) between 1 and 255),
  -- Where the upload was streamed to, relative to the service's data directory.
  stored_path text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  mime_type text,
  format text not null check (format in ('csv', 'xlsx', 'ods')),
  -- 'upload' for manual imports; the automated sources go through the needs-review stage.
  source text not null default 'upload' check (source in ('upload', 'scheduled', 'webhook', 'scraper')),
  status text not null default 'pending'
    check (status in ('pending', 'processing', 'needs-review', 'completed', 'partial', 'failed')),
  catalog_id bigint references catalogs (id) on delete set null,
  -- The uploader; quotas and access control of the accounts work key on it.
  uploaded_by bigint references users (id) on delete set null,
  settings jsonb not null default '{}'::jsonb,
  error_log jsonb not null default '[]'::jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  completed_at timestamptz
);
create index ingest_files_uploaded_by_idx on ingest_files (uploaded_by, created_at desc);

create table ingest_jobs (
  id bigint generated always as identity primary key,
  ingest_file_id bigint not null references ingest_files (id) on delete cascade,
  sheet_index integer not null default 0,
  sheet_name text,
  dataset_id bigint references datasets (id) on delete set null,
  stage text not null default 'analyze-duplicates' check (stage in (
    'analyze-duplicates', 'detect-schema', 'validate-schema', 'needs-review', 'create-schema-version',
    'geocode-batch', 'create-events', 'completed', 'failed')),
  -- Per-sheet settings: field mapping, id strategy, duplicate handling, geocoding, schema mode.
  config jsonb not null default '{}'::jsonb,
  -- Last failure: {lastError, classification, code, failedStage, recoveryAttempt{...}}.
  error_log jsonb,
  review_reasons jsonb,
  approved_at timestamptz,
  retry_attempts integer not null default 0,
  last_retry_at timestamptz,
  next_retry_at timestamptz,
  failed_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (ingest_file_id, sheet_index)
);
create index ingest_jobs_failed_idx on ingest_jobs (failed_at desc) where stage = 'failed';

create table ingest_job_stages (
  ingest_job_id bigint not null references ingest_jobs (id) on delete cascade,
  stage text not null,
  status text not null default 'pending' check (status in ('pending', 'in_progress', 'completed', 'skipped')),
  started_at timestamptz,
  completed_at timestamptz,
  rows_total bigint not null default 0,
  rows_processed bigint not null default 0,
  batches_total integer not null default 0,
  batches_current integer not null default 0,
  batch_rows_total integer not null default 0,
  batch_rows_processed integer not null default 0,
  -- Counters written in the same transaction as the work they count (events created, ...).
  counters jsonb not null default '{}'::jsonb,
  -- The task's output: what a restarted workflow returns instead of running the task again.
  output jsonb,
  primary key (ingest_job_id, stage)
);

-- Locations found for a job's addresses, written batch by batch so a restarted geocode stage
-- continues where it stopped.
create table ingest_job_geocodes (
  ingest_job_id bigint not null references ingest_jobs (id) on delete cascade,
  address text not null,
  longitude double precision,
  latitude double precision,
  confidence real,
  failure text,
  primary key (ingest_job_id, address)
);

-- Shared across jobs and processes: each distinct address is asked of a remote geocoder once.
create table geocode_cache (
  provider text not null,
  query text not null,
  longitude double precision,
  latitude double precision,
  confidence real,
  failure text,
  created_at timestamptz not null default now(),
  primary key (provider, query)
);

create table dataset_schema_versions (
  id bigint generated always as identity primary key,
  dataset_id bigint not null references datasets (id) on delete cascade,
  version integer not null,
  fields jsonb not null,
  mapping jsonb not null,
  ingest_job_id bigint references ingest_jobs (id) on delete set null,
  created_at timestamptz not null default now(),
  unique (dataset_id, version)
);
create unique index dataset_schema_versions_job_key on dataset_schema_versions (ingest_job_id)
  where ingest_job_id is not null;
