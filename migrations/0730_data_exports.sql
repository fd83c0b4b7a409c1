-- A user's export of their own data (account, catalogs, datasets, events, imports, scrapers, runs)
-- as a ZIP built by the `data-export` job. One active (queued or running) export per user.

create table data_exports (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  status text not null default 'queued' check (status in ('queued', 'running', 'ready', 'failed')),
  -- Relative to the data directory's `exports` folder; null until the ZIP is written.
  stored_path text,
  size_bytes bigint,
  error text,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create unique index data_exports_one_active_key on data_exports (user_id) where status in ('queued', 'running');
create index data_exports_user_idx on data_exports (user_id, created_at desc);
