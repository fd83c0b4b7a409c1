import t from 'tap';
import { cleanUpStuckRuns } from '../../../src/application/scrapers/clean-up-stuck-runs.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { STUCK_MARGIN_SECS } from '../../../src/domain/scrapers/runs.ts';
import { startCli, waitForOutput } from '../../helpers/cli.ts';
import { testDatabase } from '../../helpers/database.ts';
import {
  pythonRepo,
  removeRunContainer,
  RUNNER_KEY,
  scraperDeps,
  startRealRunner,
  syncedScraper,
  untilActive,
} from './scraper-fixtures.ts';

// A `chronomap worker` process killed while its run is running in the real runner: the run stays
// `running` with nobody to record its end. Past its timeout plus the margin the stuck-run cleanup
// marks it failed and asks the runner to stop it, and the runner really stops the container.

const TIMEOUT_SECS = 120;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a worker killed mid-run: the cleanup fails the run and the runner stops its container', async (t) => {
  const db = await testDatabase(t);
  const runner = await startRealRunner(t);
  const deps = await scraperDeps(t, db, { runner: runner.client });
  const manifest = `scrapers:\n  - { name: Slow, slug: slow, entrypoint: main.py, limits: { timeout: ${TIMEOUT_SECS} } }\n`;
  const { owner, scraper } = await syncedScraper(
    deps,
    db.pool,
    pythonRepo('import time\nprint("started", flush=True)\ntime.sleep(110)\n', manifest),
  );

  const worker = startCli(['worker'], {
    DATABASE_URL: db.url,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    SCRAPER_RUNNER_URL: runner.url,
    SCRAPER_API_KEY: RUNNER_KEY,
  });
  t.teardown(() => {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
  });
  await waitForOutput(worker, /chronomap worker running/);
  worker.stdout?.resume();
  worker.stderr?.resume();

  const { run } = await triggerScraperRun(deps, owner, scraper.id);
  removeRunContainer(t, run.runId);
  await untilActive(runner.client, run.runId, 'running');
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  worker.kill('SIGKILL');
  await exited;
  t.match(await deps.runs.get(run.id), { status: 'running' }, 'nobody is left to record the end');
  t.equal((await runner.client.status(run.runId)).active, true, 'the container runs on');

  t.same(await cleanUpStuckRuns(deps), { failed: [] }, 'within its time the run is left alone');
  const later = new Date(Date.now() + (TIMEOUT_SECS + STUCK_MARGIN_SECS + 5) * 1000);
  t.same(await cleanUpStuckRuns({ ...deps, clock: { now: () => later } }), { failed: [run.id] });
  t.match(await deps.runs.get(run.id), {
    status: 'failed',
    errorCode: 'STUCK',
    error: /worker or runner was lost/,
    finishedAt: String,
  });
  t.match(await deps.scrapers.get(scraper.id), { statistics: { lastRunStatus: 'failed', failedRuns: 1 } });
  // The stop ends the container; the runner then finishes the run (its answer goes to nobody).
  while ((await runner.client.status(run.runId)).active) await sleep(200);
  const metrics = (await (await fetch(`${runner.url}/metrics`)).json()) as Record<string, number>;
  t.match(
    metrics,
    { active_runs: 0, total_runs: 1, total_failed: 1, total_success: 0 },
    'stopped by the cleanup, long before the scraper would have ended by itself',
  );
});
