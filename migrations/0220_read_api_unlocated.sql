-- The events without a location, by time: bounds around the whole world are answered as the
-- counts without bounds less these (and the few beyond the box's latitudes), which would
-- otherwise take a scan of every event to find.
create index events_unlocated_time_idx on events (event_timestamp)
  include (dataset_id, catalog_id, id) where location is null;
