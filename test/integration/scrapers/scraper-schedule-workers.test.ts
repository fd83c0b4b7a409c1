import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { startCli, waitForOutput } from '../../helpers/cli.ts';
import { stopProcess } from '../../helpers/processes.ts';
import { testDatabase } from '../../helpers/database.ts';
import { assertEachMinuteRunOnce } from '../../helpers/schedule-passes.ts';
import {
  pythonRepo,
  RUNNER_KEY,
  runnerMetrics,
  scraperDeps,
  startRealRunner,
  syncedScraper,
  WRITES_TWO_ROWS,
} from './scraper-fixtures.ts';

// Real time, real processes: two `chronomap worker` processes on one database, a scraper due every
// minute, the real runner. After five minutes each due minute has exactly one run, and none in
// between was missed. The test waits for the clock, so it runs for about six minutes; tap runs the
// other files next to it (it holds no lock and uses its own database and runner).
t.setTimeout(15 * 60_000);

const MINUTE = 60_000;
const OBSERVED_MINUTES = 5;
const floorMinute = (ms: number) => Math.floor(ms / MINUTE) * MINUTE;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('two worker processes, a schedule every minute: each due minute runs exactly once', async (t) => {
  const db = await testDatabase(t);
  const runner = await startRealRunner(t, { SCRAPER_MAX_CONCURRENT: '4' });
  // The scraper is set up in this process; only the worker processes queue and execute its runs.
  const deps = await scraperDeps(t, db, { runner: runner.client });
  const manifest =
    'scrapers:\n  - name: Every minute\n    slug: minutely\n    entrypoint: main.py\n' +
    '    schedule: "* * * * *"\n    limits: { timeout: 50 }\n';
  // Trust level 5: unlimited daily runs, so the quota does not stop the schedule.
  const { scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS, manifest), 5);
  const runsBefore = (await runnerMetrics(runner.url)).total_runs;

  const env = {
    DATABASE_URL: db.url,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    SCRAPER_RUNNER_URL: runner.url,
    SCRAPER_API_KEY: RUNNER_KEY,
  };
  const workers = [startCli(['worker'], env), startCli(['worker'], env)];
  t.teardown(() => Promise.all(workers.map((worker) => stopProcess(worker))));
  await Promise.all(workers.map((worker) => waitForOutput(worker, /chronomap worker running/)));
  for (const worker of workers) {
    worker.stdout?.resume();
    worker.stderr?.resume();
  }
  const startedAt = Date.now();
  // Wait for the clock: the whole minutes in the window are the due times under test.
  while (Date.now() < startedAt + OBSERVED_MINUTES * MINUTE + 5_000) await sleep(1_000);
  const stoppedAt = Date.now();
  // Switch the schedule off and let the last queued run finish before the workers stop.
  await db.pool.query(sql.unsafe`update scrapers set enabled = false where id = ${scraper.id}`);
  const unfinished = () =>
    db.pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
      select count(*)::int as count from scraper_runs
      where scraper_id = ${scraper.id} and status in ('queued', 'running')`);
  while ((await unfinished()) > 0) await sleep(500);
  await Promise.all(workers.map((worker) => stopProcess(worker)));
  t.ok(
    workers.every((worker) => worker.exitCode === 0),
    'both workers were alive until the end and closed cleanly',
  );

  const runs = await db.pool.any(sql.type(
    row(
      Type.Object({
        scheduled_for: Type.String(),
        queued_at: Type.String(),
        status: Type.String(),
        triggered_by: Type.String(),
      }),
    ),
  )`
    select scheduled_for, queued_at, status, triggered_by from scraper_runs
    where scraper_id = ${scraper.id} order by queued_at`);
  const due = runs.map((run) => Date.parse(run.scheduled_for));
  t.ok(
    runs.length >= OBSERVED_MINUTES - 1,
    `at least ${OBSERVED_MINUTES - 1} scheduled runs (${runs.length})`,
  );
  t.ok(
    runs.every((run) => run.triggered_by === 'schedule'),
    'every run came from the schedule',
  );
  // Not every minute: a minute in which no manager pass ran has no run (test/helpers/schedule-passes.ts).
  await assertEachMinuteRunOnce(t, db.pool, due);
  t.same(
    runs.map((run) => floorMinute(Date.parse(run.queued_at))),
    due,
    'each run was queued in the minute it was due',
  );
  // The edges: the first whole minute after the workers started, the last minute before they stopped.
  t.ok((due[0] ?? Infinity) <= floorMinute(startedAt) + 2 * MINUTE, 'the first due minute was not skipped');
  t.ok((due.at(-1) ?? 0) >= floorMinute(stoppedAt) - MINUTE, 'the schedule kept running to the end');
  t.same(
    [...new Set(runs.map((run) => run.status))],
    ['success'],
    'every run finished successfully (none still queued or running)',
  );
  t.equal(
    (await runnerMetrics(runner.url)).total_runs - runsBefore,
    runs.length,
    'the runner ran each due minute once',
  );
});
