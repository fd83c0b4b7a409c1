-- API keys (issue 38 §3): programmatic credentials beside the spec's sessions. The secret
-- (cmk_<id>_<random>) is shown once; only the SHA-256 of its random part is kept. A key acts as its
-- owner limited by its scope ('read' or 'write') and, when catalog_ids is set, to those catalogs.
-- last_used_at is written at most once a minute per key (application/accounts/api-keys.ts).
create table api_keys (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  scope text not null check (scope in ('read', 'write')),
  catalog_ids bigint[],
  secret_hash bytea not null,
  hint text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create index api_keys_user_id_idx on api_keys (user_id) where revoked_at is null;
