-- Subscriptions with deliveries (issue 39 §2): src/domain/subscriptions/subscriptions.ts.
-- A subscription holds the read API's filter (catalog, datasets, box, dates) and a channel. The
-- matcher (src/adapters/postgres/subscriptions/matcher.ts) reads event_changes past the one cursor
-- of the subscriptions below (the feed's xid fence and order), matches a batch against every
-- subscription in one statement (GiST on the box, GIN on the datasets), and writes the deliveries
-- in the transaction that moves the cursor: at least once, whatever process dies when.
create table subscriptions (
  id bigint generated always as identity primary key,
  owner_id bigint not null references users (id) on delete cascade,
  api_key_id bigint references api_keys (id) on delete cascade,
  view_code text,
  name text not null check (length(name) between 1 and 200),
  channel text not null check (channel in ('webhook', 'email')),
  url text check (length(url) <= 2000),
  secret text,
  email_address_id text,
  catalog text,
  datasets text[] not null default '{}',
  box jsonb,
  bounds geometry(Geometry, 4326),
  starts_at timestamptz,
  ends_at timestamptz,
  enabled boolean not null default true,
  consecutive_failures integer not null default 0 check (consecutive_failures >= 0),
  disabled_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((channel = 'webhook') = (url is not null and secret is not null)),
  check ((channel = 'email') = (email_address_id is not null))
);
create index subscriptions_owner on subscriptions (owner_id, created_at desc);
create index subscriptions_bounds on subscriptions using gist (bounds) where enabled and bounds is not null;
create index subscriptions_datasets on subscriptions using gin (datasets) where enabled;

-- The position in event_changes up to which every change has been matched: one group for now (all
-- subscriptions), a row per group so that groups can be split later without a new table.
create table subscription_cursors (
  group_id integer primary key,
  txid xid8 not null,
  seq bigint not null,
  matched_at timestamptz not null default now()
);
insert into subscription_cursors (group_id, txid, seq)
select 0, coalesce(t.txid, h.txid), coalesce(t.seq, h.seq)
from event_changes_horizon h
left join lateral (select c.txid, c.seq from event_changes c order by c.txid desc, c.seq desc limit 1) t on true;

-- One delivery: its id is the webhook-id of every attempt; `changes` the matched positions
-- ([txid, seq] as text), read through the owner's access and privacy when it is sent.
create table subscription_deliveries (
  id text primary key,
  subscription_id bigint not null references subscriptions (id) on delete cascade,
  kind text not null check (kind in ('changes', 'test')),
  changes jsonb not null default '[]',
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed', 'dropped')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  leased_until timestamptz,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);
create index subscription_deliveries_due on subscription_deliveries (next_attempt_at) where status = 'pending';
create index subscription_deliveries_by_subscription on subscription_deliveries (subscription_id, created_at desc);

-- The delivery log: one row per attempt, the last DELIVERY_LOG_SIZE kept per subscription.
create table subscription_attempts (
  id bigint generated always as identity primary key,
  subscription_id bigint not null references subscriptions (id) on delete cascade,
  delivery_id text not null,
  attempt integer not null,
  status_code integer,
  duration_ms integer not null,
  error text,
  attempted_at timestamptz not null default now()
);
create index subscription_attempts_by_subscription on subscription_attempts (subscription_id, id desc);

-- A subscription disabled after failing deliveries tells its owner on the account pages.
alter table account_notices drop constraint account_notices_kind_check;
alter table account_notices add constraint account_notices_kind_check
  check (kind in ('source-health', 'subscription')) not valid;
alter table account_notices validate constraint account_notices_kind_check;
alter table account_notices add column subscription_id bigint references subscriptions (id) on delete cascade;
