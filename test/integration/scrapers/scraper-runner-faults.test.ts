import { createServer } from 'node:net';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { httpRunnerClient } from '../../../src/adapters/runner/runner-client.ts';
import { cancelScraperRun } from '../../../src/application/scrapers/cancel-scraper-run.ts';
import { cleanUpStuckRuns } from '../../../src/application/scrapers/clean-up-stuck-runs.ts';
import { executeScraperRun } from '../../../src/application/scrapers/execute-scraper-run.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { testDatabase } from '../../helpers/database.ts';
import {
  pythonRepo,
  RUNNER_KEY,
  scraperDeps,
  startRealRunner,
  syncedScraper,
  removeRunContainer,
  untilActive,
} from './scraper-fixtures.ts';

// What goes wrong between the main application and a real runner: at capacity, cancelled,
// unreachable, killed mid-run, and runs left behind by a lost worker.

const SLEEPS = 'import time\nprint("started", flush=True)\ntime.sleep(60)\n';

t.test(
  'a runner at its concurrency limit answers 429: the run fails cleanly; a cancel stops a running container',
  async (t) => {
    const db = await testDatabase(t);
    const runner = await startRealRunner(t, { SCRAPER_MAX_CONCURRENT: '1' });
    const deps = await scraperDeps(t, db, { runner: runner.client });
    const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(SLEEPS));

    const first = await triggerScraperRun(deps, owner, scraper.id);
    const executing = executeScraperRun(deps, first.run.id);
    await untilActive(runner.client, first.run.runId);
    t.match(await deps.scrapers.get(scraper.id), { statistics: { lastRunStatus: 'running' } });

    const second = await triggerScraperRun(deps, owner, scraper.id);
    t.same(await executeScraperRun(deps, second.run.id), {
      outcome: 'finished',
      status: 'failed',
      imported: false,
    });
    t.match(await deps.runs.get(second.run.id), { status: 'failed', errorCode: 'RUNNER_BUSY' });

    t.same(await cancelScraperRun(deps, owner, first.run.id), { cancelled: true });
    t.same(await executing, { outcome: 'skipped', reason: 'run was cancelled while running' });
    t.match(await deps.runs.get(first.run.id), { status: 'failed', errorCode: 'CANCELLED' });
    t.equal((await runner.client.status(first.run.runId)).active, false, 'the container was stopped');
    t.same(
      await cancelScraperRun(deps, owner, first.run.id),
      { cancelled: false },
      'finished runs stay as they are',
    );
  },
);

t.test('an unreachable runner and a wrong key fail the run with a reason', async (t) => {
  const db = await testDatabase(t);
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as { port: number }).port;
  await new Promise((resolve) => closed.close(resolve));
  const deps = await scraperDeps(t, db, { runner: httpRunnerClient(`http://127.0.0.1:${port}`, RUNNER_KEY) });
  const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(SLEEPS));
  const { run } = await triggerScraperRun(deps, owner, scraper.id);
  await executeScraperRun(deps, run.id);
  t.match(await deps.runs.get(run.id), {
    status: 'failed',
    errorCode: 'RUNNER_UNAVAILABLE',
    error: /ECONNREFUSED/,
  });

  const runner = await startRealRunner(t);
  const wrongKey = await scraperDeps(t, db, {
    runner: httpRunnerClient(runner.url, 'not-the-runner-key-at-all'),
  });
  const second = await triggerScraperRun(wrongKey, owner, scraper.id);
  await executeScraperRun(wrongKey, second.run.id);
  t.match(await deps.runs.get(second.run.id), { status: 'failed', errorCode: 'RUNNER_UNAUTHORIZED' });
});

t.test(
  'a runner killed mid-run fails the run; a run left running by a lost worker is cleaned up',
  async (t) => {
    const db = await testDatabase(t);
    const runner = await startRealRunner(t);
    const deps = await scraperDeps(t, db, { runner: runner.client });
    const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo('import time\ntime.sleep(8)\n'));

    const { run } = await triggerScraperRun(deps, owner, scraper.id);
    const executing = executeScraperRun(deps, run.id);
    removeRunContainer(t, run.runId);
    await untilActive(runner.client, run.runId, 'running');
    runner.process.kill('SIGKILL');
    await executing;
    t.match(await deps.runs.get(run.id), { status: 'failed', errorCode: 'RUNNER_UNAVAILABLE' });
    t.match(await deps.scrapers.get(scraper.id), { statistics: { lastRunStatus: 'failed' } });

    // A worker that died while its run was running leaves the run "running": past timeout + margin
    // the cleanup fails it and asks the runner to stop it.
    const stopped: string[] = [];
    const lost = await triggerScraperRun(deps, owner, scraper.id);
    await deps.runs.start(lost.run.id);
    const fresh = await triggerScraperRun(deps, owner, scraper.id);
    await deps.runs.start(fresh.run.id);
    await db.pool.query(sql.unsafe`
    update scraper_runs set started_at = now() - interval '60 minutes' where id = ${lost.run.id}`);
    const cleanup = {
      ...deps,
      runner: {
        ...runner.client,
        stop: async (runId: string) => (stopped.push(runId), 'not_found' as const),
      },
    };
    t.same(await cleanUpStuckRuns(cleanup), { failed: [lost.run.id] });
    t.match(await deps.runs.get(lost.run.id), {
      status: 'failed',
      errorCode: 'STUCK',
      error: /worker or runner was lost/,
    });
    t.match(await deps.runs.get(fresh.run.id), { status: 'running' }, 'a run within its time is left alone');
    t.same(stopped, [lost.run.runId]);
    t.same(await cleanUpStuckRuns(cleanup), { failed: [] }, 'once');
  },
);
