import t from 'tap';
import { createScraperRepo } from '../../../src/application/scrapers/create-scraper-repo.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { composeServices } from '../../../src/compose.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { testApp, testConfig } from '../../helpers/app.ts';
import {
  createUser,
  pythonRepo,
  RUNNER_KEY,
  runnerMetrics,
  startRealRunner,
  switchScrapers,
  WRITES_TWO_ROWS,
} from './scraper-fixtures.ts';

// The composed service with its pg-boss workers: jobs queued by the use cases are picked up by the
// workers that the scrapers' composition module (src/composition/scrapers.ts) starts, and two
// worker processes never run a run twice.

const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

t.test(
  'two composed workers sync a repo and run each queued run exactly once through the real runner',
  async (t) => {
    const runner = await startRealRunner(t, { SCRAPER_MAX_CONCURRENT: '8' });
    const config = { scraperRunnerUrl: runner.url, scraperApiKey: RUNNER_KEY };
    const { app, services, db } = await testApp(t, { workers: true, config });
    await switchScrapers(db.pool, true);
    const other = await composeServices(testConfig(config), db.url, { http: false, workers: true });
    t.teardown(() => other.close());
    const deps = composeScraperDeps(testConfig(config), services.pool, services.boss);

    const health = await app.inject({ method: 'GET', url: '/api/health' });
    t.match(health.json().runner, { status: 'ok', url: runner.url });

    const owner = await createUser(db.pool, 4);
    const repo = await createScraperRepo(deps, owner, {
      name: 'Events',
      slug: 'events',
      sourceType: 'upload',
      code: pythonRepo(WRITES_TWO_ROWS),
    });
    while ((await deps.repos.get(repo.id))?.syncStatus !== 'synced') await settle();
    const [scraper] = await deps.scrapers.listByRepo(repo.id);
    if (!scraper) throw new Error('the sync job created no scraper');

    const before = (await runnerMetrics(runner.url)).total_runs;
    const queued: number[] = [];
    for (let n = 0; n < 4; n++) queued.push((await triggerScraperRun(deps, owner, scraper.id)).run.id);
    const finished = async () => {
      const runs = await Promise.all(queued.map((id) => deps.runs.get(id)));
      return runs.every((run) => run && ['success', 'failed', 'timeout'].includes(run.status)) ? runs : null;
    };
    let runs = await finished();
    while (!runs) {
      await settle();
      runs = await finished();
    }
    t.same(
      runs.map((run) => [run?.status, run?.outputRows]),
      [
        ['success', 2],
        ['success', 2],
        ['success', 2],
        ['success', 2],
      ],
    );
    t.equal((await runnerMetrics(runner.url)).total_runs - before, 4, 'the runner ran each run once');
    t.match(await deps.scrapers.get(scraper.id), { statistics: { totalRuns: 4, successRuns: 4 } });
  },
);
