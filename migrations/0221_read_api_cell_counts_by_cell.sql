-- event_cell_counts by cell: a box's inner cells are a range of cell_x (and of cell_y) for one
-- dataset (or the totals), over every period. The primary key leads with the period, so a box read
-- every month's rows of every dataset and kept the few in the box (a city view's month counts
-- took longer than its rows at 1M events).
create index event_cell_counts_by_cell_idx on event_cell_counts (grain, dataset_id, cell_x, cell_y, period)
  include (catalog_id, event_count, sum_lon, sum_lat);
