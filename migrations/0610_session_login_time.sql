-- Sessions: when the login that started a chain of refreshed tokens happened. POST
-- /api/users/refresh-token carries it to the new session and refuses once it is older than the
-- policy's sessionMaxAgeSeconds (src/application/log-in.ts), so a token cannot be renewed forever.
-- Sessions alive at the migration count from their own creation.

alter table sessions add column logged_in_at timestamptz;
update sessions set logged_in_at = created_at;
alter table sessions alter column logged_in_at set not null;
alter table sessions alter column logged_in_at set default now();
