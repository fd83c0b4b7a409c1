-- Foundation schema: accounts, the catalog > dataset > event hierarchy.
-- Plain SQL, applied once in a transaction by `chronomap migrate`; never edit an applied file,
-- add a new one (the migrator checks checksums).

create extension if not exists postgis;

create table users (
  id bigint generated always as identity primary key,
  email text not null,
  password_hash text not null,
  role text not null default 'user' check (role in ('admin', 'user')),
  trust_level smallint not null default 1 check (trust_level between 0 and 5),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Emails are compared case-insensitively; the stored spelling is the user's.
create unique index users_email_key on users (lower(email));

create table catalogs (
  id bigint generated always as identity primary key,
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  title text not null check (length(title) between 1 and 255),
  description text,
  is_public boolean not null default false,
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table datasets (
  id bigint generated always as identity primary key,
  catalog_id bigint not null references catalogs (id) on delete cascade,
  -- Dataset slugs are unique across catalogs so that the read API's `datasets` filter is unambiguous.
  slug text not null unique check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$'),
  title text not null check (length(title) between 1 and 255),
  description text,
  is_public boolean not null default true,
  -- Schema settings: mode (strict|additive|flexible), field mappings, custom date fields for filters.
  schema_settings jsonb not null default '{}'::jsonb,
  created_by bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index datasets_catalog_id_idx on datasets (catalog_id);

create table events (
  id bigint generated always as identity primary key,
  dataset_id bigint not null references datasets (id) on delete cascade,
  -- Denormalised from the dataset so catalog filters need no join on millions of rows.
  catalog_id bigint not null references catalogs (id) on delete cascade,
  unique_id text not null,
  title text,
  data jsonb not null default '{}'::jsonb,
  location geometry(Point, 4326),
  event_timestamp timestamptz not null,
  is_valid boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- The database, not the importer, guarantees that an event is never stored twice in a dataset.
  constraint events_dataset_unique_id_key unique (dataset_id, unique_id)
);
create index events_event_timestamp_idx on events (event_timestamp desc, id desc);
create index events_dataset_timestamp_idx on events (dataset_id, event_timestamp desc);
create index events_catalog_timestamp_idx on events (catalog_id, event_timestamp desc);
create index events_location_idx on events using gist (location);
