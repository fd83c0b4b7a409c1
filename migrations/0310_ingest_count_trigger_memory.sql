-- Ingestion write path: the statement-level count trigger of 0200 groups and sorts every row of a
-- batch three ways before its upserts (event_counts, event_cell_counts). With the default 4 MB of
-- work_mem a 20,000-row batch spills those sorts to disk (external merge); with 64 MB they stay in
-- memory. Only the trigger function gets the setting, and the counts it writes are unchanged.
alter function chronomap_event_counts_trigger() set work_mem = '64MB';
