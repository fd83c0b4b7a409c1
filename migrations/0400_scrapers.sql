-- Scraper subsystem (issue 7): repos with a scrapers.yml manifest, the scrapers it declares, and
-- their runs. The database guarantees what must hold across several workers: one run per
-- scheduled due time, a webhook token hash that resolves to one scraper, legal statuses.

create table scraper_repos (
  id bigint generated always as identity primary key,
  name text not null check (length(name) between 1 and 255),
  slug text not null unique check (slug ~ '^[a-z0-9-]+$' and length(slug) <= 128),
  source_type text not null check (source_type in ('git', 'upload')),
  git_url text check (git_url is null or git_url like 'https://%'),
  git_branch text,
  -- Uploaded code: a JSON object mapping file name to content.
  code jsonb check (code is null or jsonb_typeof(code) = 'object'),
  catalog_id bigint references catalogs (id) on delete set null,
  created_by bigint references users (id) on delete set null,
  sync_status text not null default 'pending'
    check (sync_status in ('pending', 'syncing', 'synced', 'failed')),
  last_sync_at timestamptz,
  last_sync_error text,
  sync_requested_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint scraper_repos_source_check check (
    (source_type = 'git' and git_url is not null and git_branch is not null and code is null)
    or (source_type = 'upload' and code is not null and git_url is null and git_branch is null)
  )
);
create index scraper_repos_created_by_idx on scraper_repos (created_by);

create table scrapers (
  id bigint generated always as identity primary key,
  repo_id bigint not null references scraper_repos (id) on delete cascade,
  name text not null check (length(name) between 1 and 255),
  slug text not null check (slug ~ '^[a-z0-9-]+$' and length(slug) <= 128),
  runtime text not null check (runtime in ('python', 'node')),
  entrypoint text not null check (entrypoint <> '' and position('..' in entrypoint) = 0 and left(entrypoint, 1) <> '/'),
  output_file text not null default 'data.csv',
  schedule text,
  -- When the current schedule took effect: the schedule manager never runs an earlier due time.
  schedule_since timestamptz not null default now(),
  enabled boolean not null default true,
  env_vars jsonb not null default '{}'::jsonb check (jsonb_typeof(env_vars) = 'object'),
  timeout_secs integer not null default 300 check (timeout_secs between 10 and 3600),
  memory_mb integer not null default 512 check (memory_mb between 64 and 4096),
  target_dataset_id bigint references datasets (id) on delete set null,
  auto_import boolean not null default false,
  -- Statistics, kept up to date by the run store when a run starts and finishes.
  total_runs integer not null default 0,
  success_runs integer not null default 0,
  failed_runs integer not null default 0,
  last_run_at timestamptz,
  last_run_status text check (last_run_status in ('queued', 'running', 'success', 'failed', 'timeout')),
  last_run_duration_ms bigint,
  webhook_enabled boolean not null default false,
  -- SHA-256 of the token; the token itself is shown once and never stored.
  webhook_token_hash text unique check (webhook_token_hash ~ '^[0-9a-f]{64}$'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint scrapers_repo_slug_key unique (repo_id, slug),
  constraint scrapers_webhook_check check (webhook_enabled = (webhook_token_hash is not null))
);
create index scrapers_schedule_idx on scrapers (id) where enabled and schedule is not null;

create table scraper_runs (
  id bigint generated always as identity primary key,
  -- The runner's run_id.
  run_id uuid not null unique,
  scraper_id bigint not null references scrapers (id) on delete cascade,
  status text not null default 'queued'
    check (status in ('queued', 'running', 'success', 'failed', 'timeout')),
  triggered_by text not null check (triggered_by in ('schedule', 'manual', 'webhook')),
  triggered_by_user bigint references users (id) on delete set null,
  -- The cron due time a scheduled run is for; unique per scraper, so a due time runs once
  -- however many schedule managers race for it.
  scheduled_for timestamptz,
  queued_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  duration_ms bigint,
  exit_code integer,
  stdout text,
  stderr text,
  error text,
  error_code text,
  output_rows integer,
  output_bytes bigint,
  -- The CSV, base64, when it was not imported (or its import failed).
  result_file text,
  -- The ingest-files record made by auto-import (that table arrives with the ingestion pipeline).
  ingest_file_id bigint,
  import_error text,
  constraint scraper_runs_due_once unique (scraper_id, scheduled_for),
  constraint scraper_runs_schedule_check check ((triggered_by = 'schedule') = (scheduled_for is not null)),
  constraint scraper_runs_timing_check check (
    (status = 'queued' and started_at is null and finished_at is null)
    or (status = 'running' and started_at is not null and finished_at is null)
    or (status in ('success', 'failed', 'timeout') and finished_at is not null)
  )
);
create index scraper_runs_scraper_idx on scraper_runs (scraper_id, queued_at desc);
create index scraper_runs_active_idx on scraper_runs (status) where status in ('queued', 'running');

-- Daily scraper-run usage per user. Stands in for the quota store that the accounts work brings
-- (see docs/scrapers.md); the conditional upsert makes "consume if it fits" atomic.
create table scraper_quota_usage (
  user_id bigint not null references users (id) on delete cascade,
  quota text not null check (quota in ('scraperRunsPerDay')),
  day date not null,
  used integer not null check (used >= 0),
  primary key (user_id, quota, day)
);
