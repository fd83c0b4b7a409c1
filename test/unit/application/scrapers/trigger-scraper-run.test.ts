import t from 'tap';
import { triggerScraperRun } from '../../../../src/application/scrapers/trigger-scraper-run.ts';
import { ADMIN, OWNER, ownedScraper, scraperUseCaseDeps, STRANGER } from './scraper-use-case-fakes.ts';

// POST /api/scrapers/{id}/run on the shared in-memory stores: who may queue a run, and what a run
// queued by hand is (a manual run and its execution job).

t.test("the repo's owner queues a manual run, executed through the scraper job queue", async (t) => {
  const deps = scraperUseCaseDeps();
  const { scraper } = await ownedScraper(deps);
  const { run, jobId } = await triggerScraperRun(deps, OWNER, scraper.id);
  t.match(run, {
    scraperId: scraper.id,
    status: 'queued',
    triggeredBy: 'manual',
    triggeredByUser: OWNER.id,
    scheduledFor: null,
  });
  t.same(await deps.runs.get(run.id), run, 'the run is stored');
  t.same(deps.jobs.executions, [run.id]);
  t.equal(jobId, `run-${run.id}`);
  t.same(
    deps.quotas.taken,
    [],
    'the daily quota is only checked here (the execution takes it when it calls the runner)',
  );
});

t.test("an admin may run any scraper; the run is the admin's", async (t) => {
  const deps = scraperUseCaseDeps();
  const { scraper } = await ownedScraper(deps);
  const { run } = await triggerScraperRun(deps, ADMIN, scraper.id);
  t.match(run, { triggeredBy: 'manual', triggeredByUser: ADMIN.id });
});

t.test('for anyone else the scraper is not there: the not-found of a missing one', async (t) => {
  const deps = scraperUseCaseDeps();
  const { scraper } = await ownedScraper(deps);
  const notFound = { kind: 'not_found', code: 'SCRAPER_NOT_FOUND' };
  await t.rejects(triggerScraperRun(deps, STRANGER, scraper.id), notFound);
  await t.rejects(triggerScraperRun(deps, OWNER, scraper.id + 100), notFound, 'an unknown id');
  t.same(deps.jobs.executions, [], 'nothing queued');
  t.equal(await deps.runs.get(1), null, 'no run stored');
});

t.test('below trust level 3 there is no scraper access at all', async (t) => {
  const deps = scraperUseCaseDeps();
  const { scraper } = await ownedScraper(deps);
  await t.rejects(triggerScraperRun(deps, { ...OWNER, trustLevel: 2 }, scraper.id), {
    kind: 'forbidden',
    code: 'TRUST_LEVEL_TOO_LOW',
  });
  t.same(deps.jobs.executions, []);
});

t.test('while the admin has scrapers switched off, no run is queued', async (t) => {
  const deps = scraperUseCaseDeps({ enableScrapers: false });
  const { scraper } = await ownedScraper(deps);
  await t.rejects(triggerScraperRun(deps, OWNER, scraper.id), {
    kind: 'forbidden',
    code: 'SCRAPERS_DISABLED',
  });
  t.same(deps.jobs.executions, []);
  t.equal(await deps.runs.get(1), null);
});
