-- The all-time grain of event_cell_counts (issue 37 §2 and §3; docs/scaling.md, "The count model
-- that does not outgrow the events"): grain 'a' holds, per level-10 cell, every event of all time,
-- for the totals (dataset_id 0) and each catalog (dataset_id -<catalog id>). Migration 0963 fills
-- and keeps it. Here only the check on the grain is widened, in a file of its own: the ALTER
-- takes an ACCESS EXCLUSIVE lock, held only for this quick statement (the new check is `not valid`,
-- so nothing is scanned; 0964 validates it under a lock that blocks no reader or writer).
alter table event_cell_counts
  drop constraint event_cell_counts_grain_check,
  add constraint event_cell_counts_grain_check check (grain in ('y', 'm', 'a')) not valid;
