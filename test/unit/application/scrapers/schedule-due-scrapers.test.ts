import t from 'tap';
import { scheduleDueScrapers } from '../../../../src/application/scrapers/schedule-due-scrapers.ts';
import { outcome } from '../../../contracts/scrapers/scraper-store-harness.ts';
import { ownedScraper, scraperUseCaseDeps } from './scraper-use-case-fakes.ts';

// The schedule manager on the shared in-memory stores, with a clock the test moves: one run per due
// time, however often it looks, and only due times after the schedule was set.

const HOURLY = { schedule: '0 * * * *' };

async function hourly() {
  const deps = scraperUseCaseDeps({ now: new Date('2026-01-01T00:00:00Z') });
  const { scraper } = await ownedScraper(deps, HOURLY);
  return { deps, scraper };
}

t.test('a due scraper gets one scheduled run for its due time, and its execution is queued', async (t) => {
  const { deps, scraper } = await hourly();
  deps.clock.at = new Date('2026-01-01T01:00:30Z');
  const { queued } = await scheduleDueScrapers(deps);
  t.same(queued, [{ scraperId: scraper.id, scheduledFor: '2026-01-01T01:00:00.000Z' }]);
  const [runId] = deps.jobs.executions;
  t.match(await deps.runs.get(runId ?? 0), {
    scraperId: scraper.id,
    status: 'queued',
    triggeredBy: 'schedule',
    scheduledFor: '2026-01-01T01:00:00.000Z',
  });
});

t.test('a due time is run once: not again while its run waits, nor after it finished', async (t) => {
  const { deps, scraper } = await hourly();
  deps.clock.at = new Date('2026-01-01T01:00:30Z');
  await scheduleDueScrapers(deps);
  t.same((await scheduleDueScrapers(deps)).queued, [], 'its run is still queued');
  const [runId = 0] = deps.jobs.executions;
  await deps.runs.start(runId);
  await deps.runs.finish(runId, 'running', outcome('success'));
  deps.clock.at = new Date('2026-01-01T01:59:00Z');
  t.same((await scheduleDueScrapers(deps)).queued, [], 'the same due time, its run finished');
  deps.clock.at = new Date('2026-01-01T04:10:00Z');
  t.same(
    (await scheduleDueScrapers(deps)).queued,
    [{ scraperId: scraper.id, scheduledFor: '2026-01-01T04:00:00.000Z' }],
    'after a pause only the latest missed due time',
  );
  t.equal(deps.jobs.executions.length, 2);
});

t.test('two schedule managers at once queue the due time once', async (t) => {
  const { deps } = await hourly();
  deps.clock.at = new Date('2026-01-01T01:00:30Z');
  const [first, second] = await Promise.all([scheduleDueScrapers(deps), scheduleDueScrapers(deps)]);
  t.equal((first?.queued.length ?? 0) + (second?.queued.length ?? 0), 1);
  t.equal(deps.jobs.executions.length, 1);
});

t.test('nothing is due before the first occurrence after the schedule was set', async (t) => {
  const { deps } = await hourly();
  deps.clock.at = new Date('2026-01-01T00:59:59Z');
  t.same((await scheduleDueScrapers(deps)).queued, []);
  t.same(deps.jobs.executions, []);
});

t.test('a disabled scraper, and every scraper while the flag is off, is not run', async (t) => {
  const { deps, scraper } = await hourly();
  const { scraper: manual } = await ownedScraper(scraperUseCaseDeps(), {});
  t.equal(manual.schedule, null);
  await deps.scrapers.update(scraper.id, { enabled: false });
  deps.clock.at = new Date('2026-01-01T01:00:30Z');
  t.same((await scheduleDueScrapers(deps)).queued, [], 'disabled');
  await deps.scrapers.update(scraper.id, { enabled: true });
  const off = { ...deps, flags: { isEnabled: async () => false } };
  t.same((await scheduleDueScrapers(off)).queued, [], 'the flag is off');
  t.same(deps.jobs.executions, []);
});
