-- chronomap_try_timestamptz (0200) catches bad values with an EXCEPTION block, which opens a
-- subtransaction; PostgreSQL cannot start one while a query runs in parallel mode (in a worker, and
-- in the leader too, so PARALLEL RESTRICTED is not enough). Marked PARALLEL SAFE, every
-- dateField=data.<field> query failed with "cannot start subtransactions during a parallel
-- operation" once a view was large enough for a parallel plan. PARALLEL UNSAFE: queries with a
-- custom date field run without parallel workers (their statement_timeout still bounds them).
alter function chronomap_try_timestamptz(text) parallel unsafe;
