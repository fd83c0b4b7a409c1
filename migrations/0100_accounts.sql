-- Accounts: revocable sessions, feature flags, quota usage and rate-limit counters.
-- All state that several API processes must agree on lives here, never in process memory.

-- One row per issued token. A token is valid only while its session row is live, so logout and a
-- password change revoke tokens before they expire; deleting the user deletes its sessions.
create table sessions (
  id uuid primary key,
  user_id bigint not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  revoked_at timestamptz
);
create index sessions_user_id_idx on sessions (user_id);

create table feature_flags (
  name text primary key,
  enabled boolean not null,
  updated_at timestamptz not null default now(),
  updated_by bigint references users (id) on delete set null
);

-- Usage per user, quota and period. Daily quotas use the UTC day as period_start; lifetime and
-- concurrent quotas use 1970-01-01. Consumption is one conditional upsert, so two requests can
-- never both take the last unit.
create table quota_usage (
  user_id bigint not null references users (id) on delete cascade,
  quota text not null,
  period_start date not null,
  used integer not null check (used >= 0),
  primary key (user_id, quota, period_start)
);

-- Fixed-window counters for rate limits (burst, hourly, daily) and login attempts.
create table rate_limit_counters (
  key text not null,
  window_name text not null,
  window_start timestamptz not null,
  hits integer not null,
  primary key (key, window_name, window_start)
);
create index rate_limit_counters_window_start_idx on rate_limit_counters (window_start);
