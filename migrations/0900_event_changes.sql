-- The change feed of issue 39 §1 (GET /api/v1/changes; src/adapters/postgres/read/changes.ts).
-- Every statement that creates, updates or deletes events appends one row per event here, from
-- statement-level triggers with transition tables, so that every write path (imports, edits,
-- geocoding, a dataset's cascade) is logged in one place. `txid` is the writing transaction's id:
-- a reader reads only changes of transactions below pg_snapshot_xmin(pg_current_snapshot()), all
-- of which have ended, and orders them by (txid, seq), so that a change committed late by a
-- transaction that started early is never passed over (a sequence alone is not commit order).
create table event_changes (
  seq bigint generated always as identity,
  txid xid8 not null default pg_current_xact_id(),
  kind text not null check (kind in ('created', 'updated', 'deleted')),
  event_id bigint not null,
  dataset_id bigint not null,
  stored_at timestamptz not null default now(),
  primary key (txid, seq)
);
create index event_changes_stored_at on event_changes (stored_at);

-- What the prune job (chronomap_prune_event_changes) has removed: the position of the last change
-- removed, so that a reader whose cursor is before it is told (410) rather than silently skipped.
create table event_changes_horizon (
  only_row boolean primary key default true check (only_row),
  txid xid8 not null default '0'::xid8,
  seq bigint not null default 0,
  pruned_at timestamptz
);
insert into event_changes_horizon default values;

create function chronomap_log_event_changes() returns trigger
  language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into event_changes (kind, event_id, dataset_id)
      select 'created', n.id, n.dataset_id from new_events n;
  elsif tg_op = 'DELETE' then
    insert into event_changes (kind, event_id, dataset_id)
      select 'deleted', o.id, o.dataset_id from old_events o;
  else
    -- Only what a reader sees: an update that rewrites the same values (counters, grid cells) is
    -- not a change.
    insert into event_changes (kind, event_id, dataset_id)
      select 'updated', n.id, n.dataset_id
      from new_events n join old_events o on o.id = n.id
      where (n.dataset_id, n.title, n.data, n.location, n.event_timestamp, n.is_valid, n.located_by)
            is distinct from (o.dataset_id, o.title, o.data, o.location, o.event_timestamp, o.is_valid, o.located_by);
  end if;
  return null;
end $$;

create trigger events_changes_insert after insert on events
  referencing new table as new_events for each statement execute function chronomap_log_event_changes();
create trigger events_changes_update after update on events
  referencing old table as old_events new table as new_events
  for each statement execute function chronomap_log_event_changes();
create trigger events_changes_delete after delete on events
  referencing old table as old_events for each statement execute function chronomap_log_event_changes();

-- Removes the changes up to the last one stored before `keep` ago (only below the visibility fence,
-- so never one a reader has not been able to see) and moves the horizon there: one position, so
-- a reader is either past it or told that it is too late (410).
create function chronomap_prune_event_changes(keep interval) returns bigint
  language plpgsql as $$
declare
  last record;
  removed bigint;
begin
  select c.txid, c.seq into last from event_changes c
  where c.stored_at < now() - keep and c.txid < pg_snapshot_xmin(pg_current_snapshot())
  order by c.txid desc, c.seq desc limit 1;
  if last is null then
    return 0;
  end if;
  delete from event_changes c where (c.txid, c.seq) <= (last.txid, last.seq);
  get diagnostics removed = row_count;
  update event_changes_horizon h set txid = last.txid, seq = last.seq, pruned_at = now()
  where (h.txid, h.seq) < (last.txid, last.seq);
  return removed;
end $$;
