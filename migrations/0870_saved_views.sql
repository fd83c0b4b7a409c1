-- Saved views of the Explore page and their embeds (issue 38 §1–2): src/domain/site/saved-views.ts.
-- `code` is the short, stable name in /v/{code} and /embed/{code}; `state` the page's state, checked
-- by parseViewState before it is stored; `embed_origins` the sites allowed to frame the embed.
create table saved_views (
  id bigint generated always as identity primary key,
  code text not null unique check (code ~ '^[A-Za-z0-9]{10}$'),
  owner_id bigint not null references users (id) on delete cascade,
  title text not null check (length(title) between 1 and 200),
  description text not null default '' check (length(description) <= 2000),
  state jsonb not null,
  is_public boolean not null default false,
  embed_origins text[] not null default '{}' check (cardinality(embed_origins) <= 20),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create index saved_views_owner on saved_views (owner_id, created_at desc);
