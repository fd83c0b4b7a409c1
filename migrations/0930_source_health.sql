-- Source health (issue 39 §3): a scheduled import or scraper counts its bad runs in a row (failed,
-- or no new rows); when the streak reaches the source's own `alert_after` its owner gets one notice
-- (account_notices, shown on the account pages) and no other until a good run ends the streak.
-- The rule is advanceHealth (src/domain/source-health.ts).

alter table scheduled_ingests
  add column alert_after integer not null default 3 check (alert_after between 1 and 100),
  add column health_streak integer not null default 0 check (health_streak >= 0),
  add column health_last text check (health_last in ('failed', 'empty')),
  add column health_alerted boolean not null default false;

alter table scrapers
  add column alert_after integer not null default 3 check (alert_after between 1 and 100),
  add column health_streak integer not null default 0 check (health_streak >= 0),
  add column health_last text check (health_last in ('failed', 'empty')),
  add column health_alerted boolean not null default false;

-- Notices to one user, shown as a banner on their /account pages until dismissed.
create table account_notices (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  kind text not null check (kind in ('source-health')),
  source_kind text check (source_kind in ('schedule', 'scraper')),
  source_id bigint,
  message text not null check (length(message) between 1 and 2000),
  created_at timestamptz not null default now(),
  dismissed_at timestamptz
);
create index account_notices_open_idx on account_notices (user_id, created_at desc) where dismissed_at is null;
