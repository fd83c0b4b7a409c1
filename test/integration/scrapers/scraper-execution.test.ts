import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { executeScraperRun } from '../../../src/application/scrapers/execute-scraper-run.ts';
import { storeEvents } from '../../../src/adapters/postgres/ingest/event-store.ts';
import { postgresEventProvenance } from '../../../src/adapters/postgres/read/event-provenance.ts';
import { provenanceSource } from '../../../src/domain/read/provenance.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { DailyQuotaExceededError } from '../../../src/domain/scrapers/errors.ts';
import type { IngestFileCreator } from '../../../src/ports/ingest/ingest-file-creator.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { testConfig } from '../../helpers/app.ts';
import { testDatabase } from '../../helpers/database.ts';
import {
  openBoss,
  pythonRepo,
  runnerMetrics,
  scraperDeps,
  startRealRunner,
  switchScrapers,
  syncedScraper,
  WRITES_TWO_ROWS,
} from './scraper-fixtures.ts';

// Runs through the real runner: podman containers from the runner-python image. One runner serves
// the whole file (its start-up checks the sandbox with a probe container, which takes a while).
const runner = await startRealRunner(t);

// The helper library writes RFC 4180 CSV: CRLF line ends.
const CSV =
  'title,date,latitude,longitude\r\nConcert,2026-05-01,52.52,13.4\r\nMarket,2026-05-02,48.85,2.35\r\n';

/** An event as the create-events stage hands it to the store, from the first data row. */
const provenanceProbe = {
  uniqueId: 'probe',
  title: 'Concert',
  data: {},
  location: null,
  eventTimestamp: '2026-05-01T00:00:00.000Z',
  isValid: true,
  sourceRow: 1,
};

async function datasetId(pool: Parameters<typeof syncedScraper>[1]): Promise<number> {
  const catalog = await pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into catalogs (slug, title) values ('city', 'City') returning id`);
  return pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into datasets (catalog_id, slug, title) values (${catalog}, 'city-events', 'City events') returning id`);
}

t.test('a manual run through the real runner: CSV, logs and statistics recorded', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db, { runner: runner.client });
  const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));

  const { run, jobId } = await triggerScraperRun(deps, owner, scraper.id);
  t.equal(run.status, 'queued');
  t.equal(run.triggeredBy, 'manual');
  t.ok(jobId, 'an execution job was queued');

  t.same(await executeScraperRun(deps, run.id), { outcome: 'finished', status: 'success', imported: false });
  const done = await deps.runs.get(run.id);
  t.match(done, { status: 'success', exitCode: 0, outputRows: 2, error: null, ingestFileId: null });
  t.match(done?.stdout, /fetching/);
  t.equal(Buffer.from(done?.resultFile ?? '', 'base64').toString('utf8'), CSV, 'the CSV stays on the run');
  t.ok(done?.startedAt && done.finishedAt && done.durationMs !== null);
  t.match((await deps.scrapers.get(scraper.id))?.statistics, {
    totalRuns: 1,
    successRuns: 1,
    failedRuns: 0,
    lastRunStatus: 'success',
  });
  t.same(
    await executeScraperRun(deps, run.id),
    { outcome: 'skipped', reason: 'run is success' },
    'runs once',
  );
});

t.test(
  'auto-import: the CSV becomes an ingest file; a failed import is recorded and keeps the CSV',
  async (t) => {
    const db = await testDatabase(t);
    const created: { csv: string; datasetId: number; createdBy: number | null; originalName: string }[] = [];
    // The ingestion pipeline's side of the port, recording what it was given.
    const ingest: IngestFileCreator = {
      async createFromCsv(input) {
        created.push({ ...input, csv: input.csv.toString('utf8') });
        return { id: 4711 };
      },
    };
    const deps = await scraperDeps(t, db, { runner: runner.client, ingest });
    const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));
    const target = await datasetId(db.pool);
    await deps.scrapers.update(scraper.id, { autoImport: true, targetDatasetId: target });

    const { run } = await triggerScraperRun(deps, owner, scraper.id);
    t.same(await executeScraperRun(deps, run.id), { outcome: 'finished', status: 'success', imported: true });
    t.equal(created.length, 1);
    t.match(created[0], {
      csv: CSV,
      datasetId: target,
      createdBy: owner.id,
      originalName: /^events-.*\.csv$/,
    });
    t.match(await deps.runs.get(run.id), {
      status: 'success',
      ingestFileId: 4711,
      resultFile: null,
      error: null,
    });

    // When the pipeline refuses the file, the failure is on the run, the CSV too.
    const refusing: IngestFileCreator = {
      async createFromCsv() {
        throw new Error('the pipeline refused the file');
      },
    };
    const standalone = await scraperDeps(t, db, { runner: runner.client, ingest: refusing });
    const second = await triggerScraperRun(standalone, owner, scraper.id);
    t.same(await executeScraperRun(standalone, second.run.id), {
      outcome: 'finished',
      status: 'success',
      imported: false,
    });
    const failedImport = await standalone.runs.get(second.run.id);
    t.match(failedImport, { status: 'success', errorCode: 'IMPORT_FAILED', ingestFileId: null });
    t.match(failedImport?.error, /^auto-import failed: the pipeline refused the file/);
    t.equal(Buffer.from(failedImport?.resultFile ?? '', 'base64').toString('utf8'), CSV);

    // autoImport without a target dataset: nothing is imported, the CSV stays.
    await deps.scrapers.update(scraper.id, { targetDatasetId: null });
    const third = await triggerScraperRun(deps, owner, scraper.id);
    t.same(await executeScraperRun(deps, third.run.id), {
      outcome: 'finished',
      status: 'success',
      imported: false,
    });
    t.equal(created.length, 1);
  },
);

t.test(
  'auto-import through the ingestion pipeline: an ingest-files record (source scraper) and its job',
  async (t) => {
    const db = await testDatabase(t);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-scraper-import-'));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    await switchScrapers(db.pool, true);
    const boss = await openBoss(t, db);
    const deps = { ...composeScraperDeps(testConfig({ dataDir }), db.pool, boss), runner: runner.client };
    const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));
    const target = await datasetId(db.pool);
    await deps.scrapers.update(scraper.id, { autoImport: true, targetDatasetId: target });

    const { run } = await triggerScraperRun(deps, owner, scraper.id);
    t.same(await executeScraperRun(deps, run.id), { outcome: 'finished', status: 'success', imported: true });
    const recorded = await deps.runs.get(run.id);
    t.match(recorded, { status: 'success', resultFile: null, error: null });
    const file = await db.pool.one(
      sql.type(
        row(
          Type.Object({
            id: Type.Number(),
            source: Type.String(),
            format: Type.String(),
            stored_path: Type.String(),
            uploaded_by: Type.Union([Type.Number(), Type.Null()]),
            original_name: Type.String(),
            dataset_id: Type.Union([Type.Number(), Type.Null()]),
          }),
        ),
      )`
      select f.id, f.source, f.format, f.stored_path, f.uploaded_by, f.original_name, j.dataset_id
      from ingest_files f join ingest_jobs j on j.ingest_file_id = f.id`,
    );
    t.match(file, {
      id: recorded?.ingestFileId,
      source: 'scraper',
      format: 'csv',
      uploaded_by: owner.id,
      original_name: /^events-.*\.csv$/,
      dataset_id: target,
    });
    t.equal(
      readFileSync(path.join(dataDir, 'ingest', file.stored_path), 'utf8'),
      CSV,
      'the CSV as the runner gave it',
    );
    const queued = await db.pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
    select count(*)::int as count from pgboss.job where name = 'ingest-process'`);
    t.equal(queued, 1, "the pipeline's job is queued");

    // Provenance (issue 38 §5): the file's SHA-256 is the CSV's, and an event the job stores names
    // the run (uploaded code: no commit).
    const job = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
      select id from ingest_jobs where ingest_file_id = ${file.id}`);
    await storeEvents(db.pool, target, [provenanceProbe], 'skip', job);
    const eventId = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
      select id from events where dataset_id = ${target}`);
    const record = await postgresEventProvenance(db.pool).eventRecord(eventId);
    t.match(record?.file ? provenanceSource(record.file) : null, {
      kind: 'scraper',
      runId: run.runId,
      commit: null,
      sha256: createHash('sha256').update(CSV).digest('hex'),
    });
    t.match(record, { importJob: job, row: 1, sheet: { index: 0 } });
    await db.pool.query(sql.unsafe`delete from events where id = ${eventId}`);

    // The duplicate review follows the scraper's reviewDuplicates (first-run): rows the dataset
    // holds count until one of its auto-imports there completed, then only rows repeated in the output.
    const reviewOf = (fileId: number) =>
      db.pool.oneFirst(sql.type(row(Type.Object({ review: Type.Union([Type.String(), Type.Null()]) })))`
        select config->>'duplicateReview' as review from ingest_jobs where ingest_file_id = ${fileId}`);
    t.equal(await reviewOf(file.id), 'all', 'the first auto-import into the dataset');
    await db.pool.query(
      sql.unsafe`update ingest_jobs set stage = 'completed' where ingest_file_id = ${file.id}`,
    );
    const next = await triggerScraperRun(deps, owner, scraper.id);
    t.match(await executeScraperRun(deps, next.run.id), { imported: true });
    t.equal(
      await reviewOf((await deps.runs.get(next.run.id))?.ingestFileId ?? 0),
      'internal',
      'after a completed auto-import, stored rows are its own',
    );
    await deps.scrapers.update(scraper.id, { reviewDuplicates: 'always' });
    const always = await triggerScraperRun(deps, owner, scraper.id);
    t.match(await executeScraperRun(deps, always.run.id), { imported: true });
    t.equal(await reviewOf((await deps.runs.get(always.run.id))?.ingestFileId ?? 0), 'all', '`always`');
  },
);

t.test('failed, invalid-output and timed-out scrapers are recorded as the runner reports them', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db, { runner: runner.client });
  const manifest =
    'scrapers:\n' +
    '  - { name: Exit, slug: exit, entrypoint: exit.py }\n' +
    '  - { name: No save, slug: nosave, entrypoint: nosave.py }\n' +
    '  - { name: Slow, slug: slow, entrypoint: slow.py, limits: { timeout: 10 } }\n';
  const { owner, repo } = await syncedScraper(deps, db.pool, {
    'scrapers.yml': manifest,
    'exit.py': 'import sys\nprint("oops", file=sys.stderr)\nsys.exit(3)\n',
    'nosave.py': 'from chronomap.scraper import output\noutput.write_row({"a": 1})\n',
    'slow.py': 'import time\ntime.sleep(120)\n',
  });
  const bySlug = new Map((await deps.scrapers.listByRepo(repo.id)).map((s) => [s.slug, s]));
  const runOf = async (slug: string) => {
    const { run } = await triggerScraperRun(deps, owner, bySlug.get(slug)?.id ?? 0);
    await executeScraperRun(deps, run.id);
    return deps.runs.get(run.id);
  };

  const exit = await runOf('exit');
  t.match(exit, { status: 'failed', exitCode: 3, errorCode: 'EXIT_CODE', resultFile: null });
  t.match(exit?.stderr, /oops/);
  t.match(await runOf('nosave'), { status: 'failed', errorCode: 'INVALID_OUTPUT' });
  t.match(await runOf('slow'), { status: 'timeout', errorCode: 'TIMEOUT' });
  t.match((await deps.scrapers.get(bySlug.get('slow')?.id ?? 0))?.statistics, {
    lastRunStatus: 'timeout',
    totalRuns: 1,
    failedRuns: 1,
  });
});

t.test('flag off and a spent daily quota: the job returns without calling the runner', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db, { runner: runner.client });
  const off = await scraperDeps(t, db, { runner: runner.client, enableScrapers: false });
  const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo(WRITES_TWO_ROWS));
  const before = (await runnerMetrics(runner.url)).total_runs;

  const queued = await triggerScraperRun(deps, owner, scraper.id);
  t.same(await executeScraperRun(off, queued.run.id), { outcome: 'refused', code: 'SCRAPERS_DISABLED' });
  t.match(await deps.runs.get(queued.run.id), {
    status: 'failed',
    errorCode: 'SCRAPERS_DISABLED',
    startedAt: null,
  });
  await t.rejects(triggerScraperRun(off, owner, scraper.id), {
    kind: 'forbidden',
    code: 'SCRAPERS_DISABLED',
  });

  // A trusted user has 10 runs a day; the ones queued before the quota ran out are refused at execution.
  const pending = await triggerScraperRun(deps, owner, scraper.id);
  for (let used = 0; used < 10; used++)
    await deps.quotas.take(owner.id, [{ quota: 'scraperRunsPerDay', amount: 1 }]);
  t.same(await executeScraperRun(deps, pending.run.id), { outcome: 'refused', code: 'QUOTA_EXCEEDED' });
  t.match(await deps.runs.get(pending.run.id), { status: 'failed', errorCode: 'QUOTA_EXCEEDED' });
  await t.rejects(triggerScraperRun(deps, owner, scraper.id), DailyQuotaExceededError);
  t.equal((await runnerMetrics(runner.url)).total_runs, before, 'the runner was never called');
});
