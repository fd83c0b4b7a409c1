import { createServer } from 'node:net';
import t from 'tap';
import { executeScraperRun } from '../../../src/application/scrapers/execute-scraper-run.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { testApp, testConfig } from '../../helpers/app.ts';
import {
  pythonRepo,
  RUNNER_KEY,
  startRealRunner,
  switchScrapers,
  syncedScraper,
  WRITES_TWO_ROWS,
} from './scraper-fixtures.ts';

// /api/health against the real runner process: ok while it runs, degraded while it is down (and a
// run then fails cleanly), ok again once it is back on the same address.

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test('the runner check follows the real runner: up, stopped, up again', async (t) => {
  const port = await freePort();
  const runnerUrl = `http://127.0.0.1:${port}`;
  const config = { scraperRunnerUrl: runnerUrl, scraperApiKey: RUNNER_KEY };
  const { app, services, db } = await testApp(t, { config });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const health = async () => {
    const response = await fetch(`${base}/api/health`);
    return { statusCode: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  await switchScrapers(db.pool, true);
  const deps = composeScraperDeps(testConfig(config), services.pool, services.boss);
  const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));

  const first = await startRealRunner(t, { SCRAPER_PORT: String(port) });
  t.equal(first.url, runnerUrl);
  const up = await health();
  t.equal(up.statusCode, 200);
  t.same(up.body.runner, { status: 'ok', url: runnerUrl, activeRuns: 0 });

  await first.stop();
  const down = await health();
  t.equal(down.statusCode, 200, 'a runner that is down degrades the service, it does not fail it');
  t.match(down.body, {
    database: { status: 'ok' },
    runner: { status: 'degraded', url: runnerUrl, message: 'runner unreachable (ECONNREFUSED)' },
  });
  const refused = await triggerScraperRun(deps, owner, scraper.id);
  t.same(await executeScraperRun(deps, refused.run.id), {
    outcome: 'finished',
    status: 'failed',
    imported: false,
  });
  t.match(await deps.runs.get(refused.run.id), {
    status: 'failed',
    errorCode: 'RUNNER_UNAVAILABLE',
    error: /ECONNREFUSED/,
    finishedAt: String,
  });

  const second = await startRealRunner(t, { SCRAPER_PORT: String(port) });
  t.equal(second.url, runnerUrl);
  const back = await health();
  t.same(back.body.runner, { status: 'ok', url: runnerUrl, activeRuns: 0 });
  const again = await triggerScraperRun(deps, owner, scraper.id);
  t.match(await executeScraperRun(deps, again.run.id), { outcome: 'finished', status: 'success' });
});
