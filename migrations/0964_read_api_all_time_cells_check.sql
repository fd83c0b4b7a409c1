-- Validates the widened grain check of 0962 (SHARE UPDATE EXCLUSIVE: readers and writers go on).
alter table event_cell_counts validate constraint event_cell_counts_grain_check;
