-- chronomap:no-transaction
-- events_event_timestamp_idx (event_timestamp desc, id desc, migration 0001) is a narrower copy of
-- the order of events_time_cover_idx (event_timestamp, with id and the grid keys included,
-- migration 0200): every read that used it (the first pages of everything by time, a window's
-- earliest and latest event, a bitmap of a window's rows) reads the cover index as well, backwards
-- where it must, with an incremental sort of the rare equal timestamps by id. Each stored event
-- paid one B-tree insert more for it: about 18 % of its insert statement, measured on 1M events
-- (the secondary indexes together are about 85 % of it; docs/performance.md, "Where create-events
-- spends its time"). Dropped concurrently: writers and readers go on while it goes.
drop index concurrently if exists events_event_timestamp_idx;
