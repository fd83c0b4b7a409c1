-- Scheduled URL imports: a URL fetched on a five-field UTC cron schedule, by a manual trigger or by a
-- webhook call; each run is an independent ingestion workflow.

create table scheduled_ingests (
  id bigint generated always as identity primary key,
  name text not null check (length(name) between 1 and 255),
  url text not null check (url ~ '^https?://'),
  -- Five-field cron in UTC; null for webhook and manual runs only.
  schedule text,
  enabled boolean not null default true,
  catalog_id bigint not null references catalogs (id) on delete cascade,
  -- Null until the first run creates the dataset; later runs import into it.
  dataset_id bigint references datasets (id) on delete set null,
  settings jsonb not null default '{}'::jsonb,
  created_by bigint references users (id) on delete set null,
  -- SHA-256 (hex) of the 64-hex webhook token; the token itself is shown once and never stored.
  webhook_token_hash text unique,
  next_run_at timestamptz,
  last_run_at timestamptz,
  last_status text,
  last_error text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index scheduled_ingests_due_idx on scheduled_ingests (next_run_at) where enabled and schedule is not null;

create table scheduled_ingest_runs (
  id bigint generated always as identity primary key,
  scheduled_ingest_id bigint not null references scheduled_ingests (id) on delete cascade,
  -- The due time this run is for; unique per schedule, so any number of schedule managers queue
  -- each due time exactly once.
  due_at timestamptz not null,
  triggered_by text not null check (triggered_by in ('schedule', 'manual', 'webhook')),
  status text not null default 'queued' check (status in ('queued', 'fetching', 'imported', 'failed')),
  ingest_file_id bigint references ingest_files (id) on delete set null,
  error text,
  created_at timestamptz not null default now(),
  finished_at timestamptz,
  unique (scheduled_ingest_id, due_at)
);
