-- chronomap:no-transaction
-- The spatial index of events with the time beside the location: a GiST index on (location,
-- event_timestamp) (btree_gist gives timestamptz its GiST operators) in place of the one on
-- location alone (migration 0001). A dated map's small clusters look their events' ids up by cell
-- and window (src/adapters/postgres/read/clusters.ts#cellGroups): on location alone each look-up
-- visited every event of the cell in all time and read each row for its time, 0.68 ms per cluster
-- and 85 % of a dated zoom-4 view's statement on 1M real-shaped events; with the window in the
-- index it visits the window's events only, 0.08 ms. Every other use of the old index (boxes,
-- strips, the nearest event to a side for /events/bounds) constrains the first column, which the
-- two-column index serves the same way; a stored event inserts into one GiST index as before, at
-- the same cost (docs/performance.md, "Dated maps: the window in the spatial index").
-- Built concurrently before the old one is dropped, so that reads and writers go on and a spatial
-- index is there throughout. btree_gist is a trusted extension (PostgreSQL 13+): the owner of the
-- database may create it.
create extension if not exists btree_gist;
create index concurrently if not exists events_location_time_idx on events using gist (location, event_timestamp);
drop index concurrently if exists events_location_idx;
