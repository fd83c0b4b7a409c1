-- Read API: event_fine_cell_counts (0210) in key order. A map view at zoom 9-13 reads a range of
-- cell_x and, within each, a range of cell_y; the backfill and the triggers had scattered those
-- rows over the table (a city view at 10M events read ~20k rows from thousands of pages, 1.2-1.8 s
-- cold). In key order a view is a few hundred contiguous pages (a 1M-event view: 245 buffers
-- instead of 990, its scan 4 ms instead of 54). The free space left on each page keeps the
-- triggers' updates of a cell on its page (HOT updates: the key never changes); cells added later
-- go elsewhere, so `cluster event_fine_cell_counts` now and then restores the order.
alter table event_fine_cell_counts set (fillfactor = 80);
cluster event_fine_cell_counts using event_fine_cell_counts_pkey;
analyze event_fine_cell_counts;
