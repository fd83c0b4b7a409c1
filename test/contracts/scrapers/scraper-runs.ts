import type { Test } from 'tap';
import { NOT_STARTED } from '../../fakes/scrapers/scraper-stores.ts';
import {
  declared,
  isIso,
  type MakeScraperStores,
  outcome,
  queue,
  queued,
  readsBack,
  repoWith,
  type ScraperStoresHarness,
} from './scraper-store-harness.ts';

// The ScraperRunStore half of test/contracts/scrapers/scraper-stores.ts: a run's moves, what each
// records on the run and on its scraper's statistics, and the questions asked about runs.

async function oneScraper(h: ScraperStoresHarness, timeoutSecs = 60) {
  const { owner, scrapers } = await repoWith(h, [declared('s', { timeoutSecs })]);
  const [scraper] = scrapers;
  if (!scraper) throw new Error('scraper');
  return { owner, scraper };
}

export function scraperRunsContract(t: Test, make: MakeScraperStores): void {
  t.test('a queued run: its trigger, no times but the queueing, no outcome', async (t) => {
    const h = await make();
    const { owner, scraper } = await oneScraper(h);
    const runId = crypto.randomUUID();
    const run = await h.runs.createQueued({
      scraperId: scraper.id,
      runId,
      triggeredBy: 'manual',
      triggeredByUser: owner,
      scheduledFor: null,
    });
    t.match(run, {
      runId,
      scraperId: scraper.id,
      status: 'queued',
      triggeredBy: 'manual',
      triggeredByUser: owner,
      scheduledFor: null,
      ...NOT_STARTED,
    });
    t.ok(isIso(run?.queuedAt));
    await readsBack(t, run, h.runs.get);
  });

  t.test('one run per scheduled due time; runs without a due time are never duplicates', async (t) => {
    const h = await make();
    const { scraper } = await oneScraper(h);
    const { scraper: other } = await oneScraper(h);
    const due = '2026-03-01T12:00:00.000Z';
    const first = await queue(h, scraper.id, { due });
    t.match(first, { triggeredBy: 'schedule', scheduledFor: due });
    t.equal(await queue(h, scraper.id, { due }), null, 'the same due time again');
    t.ok(await queue(h, scraper.id, { due: '2026-03-01T13:00:00.000Z' }), 'the next due time');
    t.ok(await queue(h, other.id, { due }), "another scraper's run for the same time");
    const manual = await queue(h, scraper.id);
    const webhook = await queue(h, scraper.id, { triggeredBy: 'webhook' });
    t.ok(manual && webhook && manual.id !== webhook.id, 'two runs without a due time');
    await h.runs.start(first?.id ?? 0);
    await h.runs.finish(first?.id ?? 0, 'running', outcome('success'));
    t.equal(await queue(h, scraper.id, { due }), null, 'a finished run still holds its due time');
  });

  t.test("start: queued -> running, once, with the scraper's last run status", async (t) => {
    const h = await make();
    const { scraper } = await oneScraper(h);
    const run = await queued(h, scraper.id);
    t.equal(await h.runs.start(run.id), true);
    const started = await h.runs.get(run.id);
    t.match(started, { status: 'running', finishedAt: null });
    t.ok(isIso(started?.startedAt));
    const statistics = (await h.scrapers.get(scraper.id))?.statistics;
    t.match(statistics, { lastRunStatus: 'running', totalRuns: 0 });
    t.ok(isIso(statistics?.lastRunAt), 'the last run began now');
    t.equal(await h.runs.start(run.id), false, 'a running run is not started again');
    t.equal(await h.runs.start(1_000_000_000), false, 'nor a run that does not exist');
    t.same(await h.runs.get(run.id), started);
  });

  t.test("finish records the outcome once, and counts it in the scraper's statistics", async (t) => {
    const h = await make();
    const { scraper } = await oneScraper(h);
    const run = await queued(h, scraper.id);
    t.equal(await h.runs.finish(run.id, 'running', outcome('success')), false, 'a queued run is not running');
    t.match(await h.runs.get(run.id), { status: 'queued', finishedAt: null });
    await h.runs.start(run.id);
    const result = outcome('success', { durationMs: 4321, resultFile: 'ZGF0YQ==' });
    t.equal(await h.runs.finish(run.id, 'running', result), true);
    const finished = await h.runs.get(run.id);
    t.match(finished, { ...result, status: 'success' });
    t.ok(isIso(finished?.finishedAt));
    t.ok(isIso(finished?.startedAt), 'it keeps its start');
    const statistics = (await h.scrapers.get(scraper.id))?.statistics;
    t.match(statistics, {
      totalRuns: 1,
      successRuns: 1,
      failedRuns: 0,
      lastRunStatus: 'success',
      lastRunDurationMs: 4321,
    });
    t.ok(isIso(statistics?.lastRunAt));
    t.equal(await h.runs.finish(run.id, 'running', outcome('failed')), false, 'a finished run never changes');
    t.same(await h.runs.get(run.id), finished);
    t.same((await h.scrapers.get(scraper.id))?.statistics, statistics);
  });

  t.test('a queued run may fail without running; failures and timeouts count as failed', async (t) => {
    const h = await make();
    const { scraper } = await oneScraper(h);
    const never = await queued(h, scraper.id);
    const cancelled = outcome('failed', {
      exitCode: null,
      durationMs: null,
      stdout: '',
      stderr: '',
      errorCode: 'CANCELLED',
    });
    t.equal(await h.runs.finish(never.id, 'queued', cancelled), true);
    t.match(await h.runs.get(never.id), { status: 'failed', startedAt: null, errorCode: 'CANCELLED' });
    const slow = await queued(h, scraper.id);
    await h.runs.start(slow.id);
    await h.runs.finish(slow.id, 'running', outcome('timeout', { durationMs: 60_000 }));
    t.match((await h.scrapers.get(scraper.id))?.statistics, {
      totalRuns: 2,
      successRuns: 0,
      failedRuns: 2,
      lastRunStatus: 'timeout',
      lastRunDurationMs: 60_000,
    });
  });

  t.test("recordImport keeps the import's file, or the failure and the CSV to download", async (t) => {
    const h = await make();
    const { scraper } = await oneScraper(h);
    const dataset = await h.dataset();
    const imported = await queued(h, scraper.id);
    await h.runs.start(imported.id);
    await h.runs.finish(imported.id, 'running', outcome('success', { resultFile: 'YQ==' }));
    const file = await h.addImport(dataset, false);
    await h.runs.recordImport(imported.id, { ingestFileId: file });
    t.match(await h.runs.get(imported.id), { ingestFileId: file, resultFile: null, status: 'success' });

    const failed = await queued(h, scraper.id);
    await h.runs.start(failed.id);
    await h.runs.finish(failed.id, 'running', outcome('success'));
    await h.runs.recordImport(failed.id, { error: 'no dataset', resultFile: 'Yg==' });
    t.match(await h.runs.get(failed.id), {
      status: 'success',
      error: 'no dataset',
      errorCode: 'IMPORT_FAILED',
      resultFile: 'Yg==',
      ingestFileId: null,
    });
  });

  t.test(
    "hasCompletedImport: only a completed import of this scraper's runs into that dataset",
    async (t) => {
      const h = await make();
      const { scraper } = await oneScraper(h);
      const { scraper: other } = await oneScraper(h);
      const dataset = await h.dataset();
      const elsewhere = await h.dataset();
      t.equal(await h.runs.hasCompletedImport(scraper.id, dataset), false, 'no run yet');
      const importing = async (scraperId: number, datasetId: number, completed: boolean) => {
        const run = await queued(h, scraperId);
        await h.runs.start(run.id);
        await h.runs.finish(run.id, 'running', outcome('success'));
        await h.runs.recordImport(run.id, { ingestFileId: await h.addImport(datasetId, completed) });
      };
      await importing(scraper.id, dataset, false);
      t.equal(await h.runs.hasCompletedImport(scraper.id, dataset), false, 'an import not completed');
      await importing(scraper.id, elsewhere, true);
      await importing(other.id, dataset, true);
      t.equal(
        await h.runs.hasCompletedImport(scraper.id, dataset),
        false,
        'another dataset, another scraper',
      );
      await importing(scraper.id, dataset, true);
      t.equal(await h.runs.hasCompletedImport(scraper.id, dataset), true);
      t.equal(await h.runs.hasCompletedImport(scraper.id, elsewhere), true);
    },
  );

  t.test('listRunning: the running runs, oldest start first, with their timeouts', async (t) => {
    const h = await make();
    const { scraper: short } = await oneScraper(h, 30);
    const { scraper: long } = await oneScraper(h, 600);
    const waiting = await queued(h, short.id);
    const second = await queued(h, short.id);
    const first = await queued(h, long.id);
    const done = await queued(h, long.id);
    for (const run of [first, second, done]) await h.runs.start(run.id);
    await h.runs.finish(done.id, 'running', outcome('success'));
    const mine = new Set([short.id, long.id]);
    const listed = (await h.runs.listRunning()).filter((run) => mine.has(run.scraperId));
    t.same(
      listed.map((run) => [run.id, run.timeoutSecs, run.status]),
      [
        [first.id, 600, 'running'],
        [second.id, 30, 'running'],
      ],
    );
    t.same(listed[1], { ...(await h.runs.get(second.id)), timeoutSecs: 30 });
    t.notOk(
      listed.some((run) => run.id === waiting.id),
      'a queued run is not running',
    );
  });
}
