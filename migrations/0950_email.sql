-- E-mail (issue 39 §2 e-mail digests, §3 source-health alerts): addresses confirmed by double
-- opt-in, a durable outbox sent by the worker, and one-click unsubscribe tokens (RFC 8058).
-- Every token is kept as its SHA-256 only (src/domain/email/tokens.ts): a copy of the database
-- confirms nothing and unsubscribes no one. New tables only: nothing big is rewritten.

create table email_addresses (
  id uuid primary key default gen_random_uuid(),
  user_id bigint not null references users (id) on delete cascade,
  address text not null check (length(address) between 3 and 254),
  confirmed_at timestamptz,
  -- The pending confirmation: its token's hash and when it stops working. Cleared once confirmed.
  confirm_token_hash bytea unique,
  confirm_expires_at timestamptz,
  created_at timestamptz not null default now()
);
create unique index email_addresses_user_address_idx on email_addresses (user_id, lower(address));

-- A token per mail (only its hash is kept, so it cannot be reused): the mail's List-Unsubscribe URL
-- stops its stream to its address.
-- stream: 'source-health' or 'subscription:<id>'.
create table email_unsubscribe_tokens (
  token_hash bytea primary key,
  email_address_id uuid not null references email_addresses (id) on delete cascade,
  stream text not null check (length(stream) between 1 and 200)
);
create index email_unsubscribe_tokens_address_idx on email_unsubscribe_tokens (email_address_id);

-- Streams an address no longer receives.
create table email_suppressions (
  email_address_id uuid not null references email_addresses (id) on delete cascade,
  stream text not null,
  created_at timestamptz not null default now(),
  primary key (email_address_id, stream)
);

-- The outbox: a mail is a row written in the caller's transaction; the worker renders and sends it.
-- `payload` holds what the template needs, raw tokens included, so it is cleared once the mail is
-- sent or given up. A worker claims a row by moving next_attempt_at past its lease: a worker killed
-- mid-send leaves the row to be claimed again when the lease ends (at least once, never lost).
create table email_outbox (
  id bigint generated always as identity primary key,
  user_id bigint references users (id) on delete cascade,
  email_address_id uuid references email_addresses (id) on delete set null,
  to_address text not null,
  kind text not null check (kind in ('confirm', 'source-health', 'digest')),
  stream text,
  payload jsonb,
  status text not null default 'queued' check (status in ('queued', 'sending', 'sent', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text,
  created_at timestamptz not null default now(),
  sent_at timestamptz
);
create index email_outbox_due_idx on email_outbox (next_attempt_at) where status in ('queued', 'sending');
create index email_outbox_user_idx on email_outbox (user_id, created_at desc);
