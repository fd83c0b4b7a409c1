import t from 'tap';
import { httpRunnerClient } from '../../../src/adapters/runner/runner-client.ts';
import { cancelScraperRun } from '../../../src/application/scrapers/cancel-scraper-run.ts';
import { executeScraperRun } from '../../../src/application/scrapers/execute-scraper-run.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { testDatabase } from '../../helpers/database.ts';
import { freePort, startHaproxy } from '../../helpers/haproxy.ts';
import {
  pythonRepo,
  RUNNER_KEY,
  runnerMetrics,
  scraperDeps,
  startRealRunner,
  syncedScraper,
  untilActive,
  removeRunContainer,
  WRITES_TWO_ROWS,
} from '../scrapers/scraper-fixtures.ts';

// Two real scraper runners behind a real HAProxy, the application talking to HAProxy only: runs
// spread over both runners; a run's cancel reaches the runner that runs it (the client names the
// run in a header, HAProxy sticks on it); a runner SIGKILLed mid-run fails its run cleanly and the
// next runs go to the other one. (The API and worker processes behind HAProxy:
// scale-out.test.ts.)
t.setTimeout(6 * 60_000);

const SLEEPS = 'import time\nprint("started", flush=True)\ntime.sleep(60)\n';

t.test(
  'two runners behind HAProxy: runs spread, a cancel reaches its runner, a killed runner fails its run cleanly',
  async (t) => {
    const db = await testDatabase(t);
    const ports = [await freePort(), await freePort()] as [number, number];
    const runners = await Promise.all(
      ports.map((port) => startRealRunner(t, { SCRAPER_PORT: String(port), SCRAPER_MAX_CONCURRENT: '2' })),
    );
    const [runner1, runner2] = runners as [(typeof runners)[0], (typeof runners)[0]];
    const lb = await startHaproxy(
      t,
      [
        { name: 'runner1', port: ports[0] },
        { name: 'runner2', port: ports[1] },
      ],
      'runner',
    );
    const balanced = httpRunnerClient(lb.url, RUNNER_KEY);
    const deps = await scraperDeps(t, db, { runner: balanced });

    // Quick runs, four at once: both runners take some.
    const quick = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS), 5);
    const triggered = [];
    for (let i = 0; i < 4; i++) triggered.push(await triggerScraperRun(deps, quick.owner, quick.scraper.id));
    const results = await Promise.all(triggered.map((r) => executeScraperRun(deps, r.run.id)));
    t.same(
      results.map((r) => (r.outcome === 'finished' ? r.status : r.outcome)),
      ['success', 'success', 'success', 'success'],
      'every run succeeded',
    );
    const counts: [number, number] = [
      (await runnerMetrics(runner1.url)).total_runs,
      (await runnerMetrics(runner2.url)).total_runs,
    ];
    t.equal(counts[0] + counts[1], 4, `each run ran once: ${counts.join(' + ')}`);
    t.ok(counts[0] > 0 && counts[1] > 0, 'both runners took runs');

    // Two long runs at once: one on each runner (leastconn).
    const slow = await syncedScraper(deps, db.pool, pythonRepo(SLEEPS), 5);
    const a = await triggerScraperRun(deps, slow.owner, slow.scraper.id);
    const b = await triggerScraperRun(deps, slow.owner, slow.scraper.id);
    removeRunContainer(t, a.run.runId);
    removeRunContainer(t, b.run.runId);
    const executingA = executeScraperRun(deps, a.run.id);
    const executingB = executeScraperRun(deps, b.run.id);
    await untilActive(balanced, a.run.runId, 'running');
    await untilActive(balanced, b.run.runId, 'running');
    const holder = async (runId: string) => ((await runner1.client.status(runId)).active ? runner1 : runner2);
    const [holderA, holderB] = [await holder(a.run.runId), await holder(b.run.runId)];
    t.not(holderA, holderB, 'the two long runs went to different runners');

    // Without the run id to stick on, about half of these would reach the other runner (inactive).
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await balanced.status(a.run.runId)).active, (await balanced.status(b.run.runId)).active);
    }
    t.ok(statuses.every(Boolean), 'every status call through HAProxy reached the runner running the run');

    // Cancel A through HAProxy: the stop reaches the runner running it, whichever it is.
    t.same(await cancelScraperRun(deps, slow.owner, a.run.id), { cancelled: true });
    t.same(await executingA, { outcome: 'skipped', reason: 'run was cancelled while running' });
    t.equal((await holderA.client.status(a.run.runId)).active, false, 'its container was stopped');

    // SIGKILL the runner running B: B fails with a reason, not stuck; HAProxy takes it out.
    holderB.process.kill('SIGKILL');
    const outcomeB = await executingB;
    t.match(outcomeB, { outcome: 'finished', status: 'failed' }, 'the run on the killed runner failed');
    const failedB = await deps.runs.get(b.run.id);
    t.match(failedB, { status: 'failed', errorCode: String }, `run B: ${failedB?.errorCode}`);
    const survivor = holderB === runner1 ? runner2 : runner1;
    const survivorRunsBefore = (await runnerMetrics(survivor.url)).total_runs;
    const deadName = holderB === runner1 ? 'runner1' : 'runner2';
    await lb.waitFor(deadName, 'DOWN');

    // The next runs all go to the runner left.
    const after = [];
    for (let i = 0; i < 2; i++) after.push(await triggerScraperRun(deps, quick.owner, quick.scraper.id));
    const afterResults = await Promise.all(after.map((r) => executeScraperRun(deps, r.run.id)));
    t.same(
      afterResults.map((r) => (r.outcome === 'finished' ? r.status : r.outcome)),
      ['success', 'success'],
      'runs after the kill succeed on the other runner',
    );
    t.equal(
      (await runnerMetrics(survivor.url)).total_runs - survivorRunsBefore,
      2,
      'both ran on the survivor',
    );
  },
);
