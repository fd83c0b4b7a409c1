-- event_counts of the totals and of the catalogs by dataset id: histograms without bounds (and
-- boxes over most of the world) read one grain of the totals' (dataset 0) or a catalog's
-- (-<catalog id>) rows over every period, e.g. the 3,650 day rows of the totals for ten years.
-- The primary key leads with the period, so they were a sequential scan of the whole table (every
-- dataset's days: 88k rows at 1M benchmark events). Covering, so that the read is index-only.
-- Partial, so that writers pay for it only on the total and catalog rows: about a quarter of the
-- keys an insert statement upserts (a 50,000-row batch over ten years: 15k of 63k); updates of the
-- counts were rarely HOT anyway (4 % in the 1M benchmark's load: its pages are full). Per-dataset
-- rows (a histogram filtered by dataset) keep the primary key.
create index event_counts_by_dataset_idx on event_counts (grain, dataset_id, period)
  include (catalog_id, event_count)
  where dataset_id <= 0;
