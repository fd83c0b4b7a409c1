-- The import wizard's uploads that have not started yet: a file uploaded with `start=false` waits
-- here, with the settings `POST /api/ingest/configure` stores, until it is started (then it becomes
-- an ingest file, `started_file_id`) or expires (its file is removed).

create table ingest_drafts (
  id bigint generated always as identity primary key,
  uploaded_by bigint not null references users (id) on delete cascade,
  catalog_id bigint not null references catalogs (id) on delete cascade,
  original_name text not null check (length(original_name) between 1 and 255),
  stored_path text not null,
  size_bytes bigint not null check (size_bytes >= 0),
  mime_type text,
  format text not null check (format in ('csv', 'xlsx', 'ods')),
  -- Sheet names of a workbook ([null] for a CSV), read at upload.
  sheets jsonb not null,
  -- The settings as the caller sent them (validated when stored), applied when the import starts.
  settings jsonb not null default '{}'::jsonb,
  configured_at timestamptz,
  started_file_id bigint references ingest_files (id) on delete set null,
  started_at timestamptz,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index ingest_drafts_expiry_idx on ingest_drafts (expires_at) where started_at is null;
create index ingest_drafts_uploaded_by_idx on ingest_drafts (uploaded_by, created_at desc);
