-- event_counts by dataset: histograms without bounds (and boxes over most of the world) read one
-- dataset's (or the totals') rows of one grain over every period, e.g. the 3,650 day rows of
-- dataset 0 for ten years. The primary key leads with the period, so they were a sequential scan
-- of the whole table (every dataset's days: 88k rows at 1M benchmark events), then a bitmap scan
-- over the pages those rows are scattered on. Covering, so that the read is index-only; updates
-- of the counts were rarely HOT anyway (4 % in the 1M benchmark's load: its pages are full).
create index event_counts_by_dataset_idx on event_counts (grain, dataset_id, period)
  include (catalog_id, event_count);
