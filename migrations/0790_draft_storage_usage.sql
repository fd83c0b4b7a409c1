-- Issue 30 §1: drafts (uploads with start=false) now take draftStorageMB (their size in whole MB,
-- rounded up, at least 1) until they start or expire, given back by the wizard's start and by the
-- expired-drafts clean-up. Drafts stored before this took none: start the usage from them, so their
-- expiry does not give back what newer drafts took.

insert into quota_usage (user_id, quota, period_start, used)
select uploaded_by, 'draftStorageMB', date '1970-01-01',
  sum(greatest(1, ceil(size_bytes / 1048576.0)))::integer
from ingest_drafts
where started_at is null
group by uploaded_by
on conflict (user_id, quota, period_start) do update set used = excluded.used;
