-- Quotas: scraperRepos and activeSchedules are now taken and given back through the one quota seam
-- (src/adapters/postgres/quotas.ts) like every other quota, so /api/quotas shows them as they are.
-- Before, repos were counted on the repos table and an active schedule was taken once and never
-- given back: start both from what exists. (totalEvents cannot be reconstructed per user for
-- imported events, which did not count before; it counts from here on.)

insert into quota_usage (user_id, quota, period_start, used)
select created_by, 'scraperRepos', date '1970-01-01', count(*)
from scraper_repos where created_by is not null
group by created_by
on conflict (user_id, quota, period_start) do update set used = excluded.used;

insert into quota_usage (user_id, quota, period_start, used)
select created_by, 'activeSchedules', date '1970-01-01', count(*)
from scheduled_ingests
where created_by is not null and enabled and coalesce(schedule, '') <> ''
group by created_by
on conflict (user_id, quota, period_start) do update set used = excluded.used;
