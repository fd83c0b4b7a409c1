-- Settings an admin keeps for the whole site, one JSON document per key: the legal notices
-- (`legal-notices`) and the newsletter service (`newsletter`). Read often, written rarely.

create table site_settings (
  key text primary key check (key in ('legal-notices', 'newsletter')),
  value jsonb not null,
  updated_by bigint references users (id) on delete set null,
  updated_at timestamptz not null default now()
);
