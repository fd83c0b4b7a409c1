import { randomUUID } from 'node:crypto';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { postgresIngestJobStore } from '../../../src/adapters/postgres/ingest/ingest-job-store.ts';
import { postgresScheduleStore } from '../../../src/adapters/postgres/ingest/schedule-store.ts';
import { postgresScraperRunStore } from '../../../src/adapters/postgres/scrapers/scraper-run-store.ts';
import type { RunOutcome } from '../../../src/domain/scrapers/scrapers.ts';
import { accountsApp } from '../../helpers/accounts.ts';
import { type TestDatabase, testDatabase } from '../../helpers/database.ts';

// Source health (issue 39 §3) on a real database, through the stores the running code records runs
// with: a scraper's and a scheduled import's bad runs in a row (failed, or no new rows) counted on
// the source, one notice to the owner when the streak reaches the source's alertAfter, none after
// that within the streak, and a good run ending it (the next streak alerts again).

type Health = { health_streak: number; health_last: string | null; health_alerted: boolean };

async function owner(db: TestDatabase): Promise<number> {
  return (await db.pool.oneFirst(sql.unsafe`
    insert into users (email, password_hash) values (${`${randomUUID()}@example.org`}, 'x') returning id`)) as number;
}

const notices = async (db: TestDatabase, userId: number) =>
  (await db.pool.any(sql.unsafe`
    select source_kind, source_id, message from account_notices where user_id = ${userId} order by id`)) as Array<{
    source_kind: string;
    source_id: number;
    message: string;
  }>;

function outcome(status: RunOutcome['status'], outputRows: number | null): RunOutcome {
  return {
    status,
    exitCode: status === 'success' ? 0 : 1,
    durationMs: 10,
    stdout: '',
    stderr: '',
    error: status === 'success' ? null : 'boom',
    errorCode: null,
    outputRows,
    outputBytes: outputRows === null ? null : 100,
    resultFile: null,
  };
}

t.test('a scraper: failures and empty runs in a row, one notice per streak, reset on success', async (t) => {
  const db = await testDatabase(t);
  const userId = await owner(db);
  const scraperId = (await db.pool.oneFirst(sql.unsafe`
    with repo as (
      insert into scraper_repos (name, slug, source_type, code, created_by)
      values ('Repo', 'repo', 'upload', '{}'::jsonb, ${userId}) returning id
    )
    insert into scrapers (repo_id, name, slug, runtime, entrypoint, alert_after)
    select id, 'Council minutes', 'minutes', 'python', 'main.py', 3 from repo returning id`)) as number;
  const runs = postgresScraperRunStore(db.pool);
  const run = async (result: RunOutcome) => {
    const id = (await db.pool.oneFirst(sql.unsafe`
      insert into scraper_runs (run_id, scraper_id, status, triggered_by, started_at)
      values (${randomUUID()}, ${scraperId}, 'running', 'manual', now()) returning id`)) as number;
    t.ok(await runs.finish(id, 'running', result));
    return (await db.pool.one(sql.unsafe`
      select health_streak, health_last, health_alerted from scrapers where id = ${scraperId}`)) as Health;
  };

  t.match(await run(outcome('failed', null)), {
    health_streak: 1,
    health_last: 'failed',
    health_alerted: false,
  });
  t.match(await run(outcome('success', 0)), { health_streak: 2, health_last: 'empty' }, 'no rows counts too');
  t.same(await notices(db, userId), [], 'below the threshold: no notice');
  t.match(await run(outcome('timeout', null)), { health_streak: 3, health_alerted: true });
  const [first, ...others] = await notices(db, userId);
  t.same(others, [], 'one notice');
  t.match(first, { source_kind: 'scraper', source_id: scraperId, message: /Council minutes.*3 bad runs/ });
  await run(outcome('success', 0));
  await run(outcome('failed', null));
  t.equal((await notices(db, userId)).length, 1, 'the same streak never alerts twice');

  t.same(await run(outcome('success', 12)), { health_streak: 0, health_last: null, health_alerted: false });
  t.equal(
    await db.pool.oneFirst(sql.unsafe`select count(*)::int from account_notices where dismissed_at is null`),
    0,
    'the good run closed the notice',
  );
  for (let i = 0; i < 3; i += 1) await run(outcome('success', 0));
  t.equal((await notices(db, userId)).length, 2, 'a new streak after a good run alerts again');
});

t.test('a scheduled import: failed fetches, failed and empty imports, reset on new rows', async (t) => {
  const db = await testDatabase(t);
  const userId = await owner(db);
  const scheduleId = (await db.pool.oneFirst(sql.unsafe`
    with catalog as (insert into catalogs (slug, title) values ('c', 'C') returning id)
    insert into scheduled_ingests (name, url, catalog_id, created_by, alert_after)
    select 'Daily feed', 'https://example.org/feed.csv', id, ${userId}, 2 from catalog returning id`)) as number;
  const schedules = postgresScheduleStore(db.pool);
  const jobs = postgresIngestJobStore(db.pool);
  const health = async () =>
    (await db.pool.one(sql.unsafe`
      select health_streak, health_last, health_alerted from scheduled_ingests where id = ${scheduleId}`)) as Health;
  let due = 0;
  const newRun = async () =>
    (await db.pool.oneFirst(sql.unsafe`
      insert into scheduled_ingest_runs (scheduled_ingest_id, due_at, triggered_by, status)
      values (${scheduleId}, now() + ${`${(due += 1)} minutes`}::interval, 'manual', 'fetching') returning id`)) as number;
  /** A run whose file was fetched and imported: its job ends with `created` new events. */
  const importedRun = async (created: number) => {
    const runId = await newRun();
    const jobId = (await db.pool.oneFirst(sql.unsafe`
      with file as (
        insert into ingest_files (original_name, stored_path, size_bytes, format, source)
        values ('feed.csv', '/nowhere', 10, 'csv', 'scheduled') returning id
      ), job as (
        insert into ingest_jobs (ingest_file_id, stage) select id, 'create-events' from file returning id
      ), stage as (
        insert into ingest_job_stages (ingest_job_id, stage, status, counters)
        select id, 'create-events', 'completed', ${JSON.stringify({ created })}::jsonb from job
      )
      select id from job`)) as number;
    const fileId = (await db.pool.oneFirst(sql.unsafe`
      select ingest_file_id from ingest_jobs where id = ${jobId}`)) as number;
    await schedules.finishRun(runId, { status: 'imported', ingestFileId: fileId });
    return jobId;
  };

  await schedules.finishRun(await newRun(), { status: 'failed', error: 'HTTP 500' });
  t.match(await health(), { health_streak: 1, health_last: 'failed' }, 'a failed fetch');
  const imported = await importedRun(0);
  t.match(await health(), { health_streak: 1 }, 'an import still running is not judged yet');
  await jobs.markCompleted(imported, null);
  t.match(await health(), { health_streak: 2, health_last: 'empty', health_alerted: true }, 'no new rows');
  const [notice, ...more] = await notices(db, userId);
  t.same(more, []);
  t.match(notice, { source_kind: 'schedule', source_id: scheduleId, message: /Daily feed.*no new rows/ });

  await jobs.markFailed(await importedRun(5), [{ message: 'bad rows' }] as never);
  t.match(await health(), { health_streak: 3, health_last: 'failed' }, 'a failed import counts');
  t.equal((await notices(db, userId)).length, 1, 'once per streak');

  await jobs.markCompleted(await importedRun(7), null);
  t.same(await health(), { health_streak: 0, health_last: null, health_alerted: false }, 'new rows end it');
});

t.test(
  'the scheduled imports page shows the streak and a banner once it reaches the threshold',
  async (t) => {
    const { db, createUser, login, as } = await accountsApp(t);
    const user = await createUser();
    const session = as(await login(user));
    const scheduleId = (await db.pool.oneFirst(sql.unsafe`
    with catalog as (insert into catalogs (slug, title, created_by) values ('feeds', 'Feeds', ${user.id}) returning id)
    insert into scheduled_ingests (name, url, catalog_id, created_by, alert_after, settings)
    select 'Nightly CSV', 'https://example.org/n.csv', id, ${user.id}, 2, '{"fieldMapping": {}}'::jsonb
    from catalog returning id`)) as number;
    const schedules = postgresScheduleStore(db.pool);
    const fail = async (minutes: number) => {
      const runId = (await db.pool.oneFirst(sql.unsafe`
      insert into scheduled_ingest_runs (scheduled_ingest_id, due_at, triggered_by, status)
      values (${scheduleId}, now() + ${`${minutes} minutes`}::interval, 'manual', 'fetching') returning id`)) as number;
      await schedules.finishRun(runId, { status: 'failed', error: 'HTTP 503' });
    };
    await fail(1);
    const one = (await session('GET', '/account/scheduled-imports')).body;
    t.match(one, /1 bad run in a row \(latest: failed\) · alert after\s+2/);
    t.notMatch(one, /source-health-banner/, 'below the threshold: no banner');
    await fail(2);
    const two = (await session('GET', '/account/scheduled-imports')).body;
    t.match(two, /class="flash error source-health-banner"[^>]*>[^<]*A source needs attention/);
    t.match(two, /<strong>Nightly CSV<\/strong> \(2 bad runs in a row\)/);
  },
);
