-- Background exports of a view (issue 36 §1; application/read/background-exports.ts): a first export
-- of a kept-file format whose estimated size passes EXPORT_SYNC_MAX_EVENTS is written by a pg-boss
-- job into the export file store, and its requester follows it at /api/v1/exports/{id}. A new,
-- empty table: nothing is rewritten.
--
-- `export_key` names the file (format, sort, filter, data version of what the viewer may read);
-- `viewer` is the requester as the access rule needs them (id, role, trust, API-key grant), so the
-- job exports exactly what they may read; `viewer_id` is who may read the status (null: anonymous,
-- then only the unguessable id). `heartbeat_at` is the running worker's lease, renewed every few
-- seconds: a running job whose lease ran out is a stopped worker (application/read/background-exports.ts).

create table view_export_jobs (
  id uuid primary key,
  export_key text not null,
  format text not null,
  query jsonb not null,
  viewer jsonb,
  viewer_id bigint,
  state text not null default 'queued' check (state in ('queued', 'running', 'failed', 'done')),
  reason text,
  written bigint not null default 0,
  estimated bigint not null,
  attempts integer not null default 0,
  heartbeat_at timestamptz,
  created_at timestamptz not null default now(),
  finished_at timestamptz
);

-- One job per view, format and data version for each requester while it is unfinished: the same
-- request again joins it.
create unique index view_export_jobs_unfinished on view_export_jobs (export_key, coalesce(viewer_id, 0))
  where state in ('queued', 'running');
create index view_export_jobs_created on view_export_jobs (created_at);
