import { createHash } from 'node:crypto';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { completedScraperImport } from './scraper-fixtures.ts';
import { scraperCollectionsSetup } from './scraper-collections-fixtures.ts';

// The scrapers and scraper-runs collections over HTTP, on a real database: the owner, another
// user and admins, the user-set fields, webhook tokens, runs, cancel and import outcomes. Repos:
// scraper-repo-collections.test.ts.

t.test('scrapers and scraper runs API', async (t) => {
  const { db, scrapers, adminApi, trusted, trustedApi, powerApi, anonymous, uploadRepo, createEventsRepo } =
    await scraperCollectionsSetup(t);
  t.equal((await adminApi('PATCH', '/api/feature-flags', { enableScrapers: true })).statusCode, 200);
  const { repoId } = await createEventsRepo();

  // The owner is at the level-3 quota of three repos (the last test frees a place), and has a
  // catalog of their own for scraped events.
  for (const slug of ['t2', 't3'])
    t.equal((await trustedApi('POST', '/api/scraper-repos', uploadRepo(slug))).statusCode, 201);
  t.equal((await trustedApi('POST', '/api/scraper-repos', uploadRepo('t4'))).statusCode, 403, 'at the quota');
  const catalog = await trustedApi('POST', '/api/catalogs', { slug: 'scraped', title: 'Scraped' });
  t.equal(catalog.statusCode, 201, catalog.body);

  // The sync is the scrapers' only source: run it as the worker would.
  await syncScraperRepo(scrapers, repoId);
  const scraperList = await trustedApi('GET', `/api/scrapers?where[repo][equals]=${repoId}&sort=slug`);
  const [events, venues] = scraperList.json().docs as { id: number; slug: string }[];

  await t.test('scrapers: listed and read by the owner, made by the sync only', async (t) => {
    t.equal(scraperList.statusCode, 200, scraperList.body);
    t.same(
      scraperList.json().docs.map((d: { slug: string }) => d.slug),
      ['events', 'venues'],
    );
    const one = await trustedApi('GET', `/api/scrapers/${events?.id}`);
    t.match(one.json(), {
      repo: repoId,
      runtime: 'python',
      entrypoint: 'main.py',
      outputFile: 'data.csv',
      schedule: '0 * * * *',
      enabled: true,
      envVars: {},
      timeoutSecs: 300,
      memoryMb: 512,
      targetDataset: null,
      autoImport: false,
      reviewDuplicates: 'first-run',
      webhookEnabled: false,
      statistics: { totalRuns: 0, successRuns: 0, failedRuns: 0, lastRunAt: null, lastRunStatus: null },
    });
    t.equal((await trustedApi('GET', '/api/scrapers?where[schedule][exists]=true')).json().totalDocs, 1);
    t.equal((await powerApi('GET', `/api/scrapers/${events?.id}`)).statusCode, 404);
    t.equal((await powerApi('GET', '/api/scrapers')).json().totalDocs, 0);
    t.equal((await adminApi('GET', `/api/scrapers/${events?.id}`)).statusCode, 200);
    const create = await trustedApi('POST', '/api/scrapers', { name: 'x', slug: 'x', repo: repoId });
    t.equal(create.statusCode, 403);
    t.equal(create.json().code, 'SCRAPERS_FROM_MANIFEST');
    t.match(create.json().message, /scrapers\.yml/);
    t.equal((await adminApi('DELETE', `/api/scrapers/${events?.id}`)).statusCode, 403);
  });

  await t.test('scrapers: the user-set fields, and webhook tokens shown once', async (t) => {
    const dataset = await trustedApi('POST', '/api/datasets', {
      catalog: (await trustedApi('GET', '/api/catalogs?where[slug][equals]=scraped')).json().docs[0].id,
      slug: 'scraped-events',
      title: 'Scraped events',
    });
    const changed = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, {
      enabled: false,
      envVars: { API_BASE: 'https://example.org', PAGE_SIZE: '50' },
      targetDataset: dataset.json().doc.id,
      autoImport: true,
      reviewDuplicates: 'never',
    });
    t.equal(changed.statusCode, 200, changed.body);
    t.match(changed.json().doc, {
      enabled: false,
      envVars: { API_BASE: 'https://example.org', PAGE_SIZE: '50' },
      targetDataset: dataset.json().doc.id,
      autoImport: true,
      reviewDuplicates: 'never',
    });
    const sometimes = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, {
      reviewDuplicates: 'sometimes',
    });
    t.equal(sometimes.statusCode, 400, 'reviewDuplicates takes first-run, always or never');
    t.equal((await trustedApi('GET', `/api/scrapers/${events?.id}`)).json().reviewDuplicates, 'never');
    t.notOk('webhookToken' in changed.json());

    const on = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: true });
    t.equal(on.statusCode, 200, on.body);
    const token = on.json().webhookToken as string;
    t.match(token, /^[0-9a-f]{64}$/);
    t.equal(on.json().doc.webhookEnabled, true);
    const stored = await db.pool.oneFirst(sql.type(row(Type.Object({ h: Type.String() })))`
      select webhook_token_hash as h from scrapers where id = ${events?.id ?? 0}`);
    t.equal(stored, createHash('sha256').update(token).digest('hex'), 'only the hash is stored');
    const read = await trustedApi('GET', `/api/scrapers/${events?.id}`);
    t.notOk(read.body.includes(token), 'never shown again');
    t.notOk(read.body.includes(stored), 'nor its hash');
    const again = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: true });
    t.notOk('webhookToken' in again.json(), 'already on: no new token');

    const rotated = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { rotateWebhookToken: true });
    const second = rotated.json().webhookToken as string;
    t.match(second, /^[0-9a-f]{64}$/);
    t.not(second, token);
    t.equal(
      (await anonymous('POST', `/api/webhooks/trigger/${token}`)).statusCode,
      404,
      'the old token is dead',
    );
    const off = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: false });
    t.equal(off.json().doc.webhookEnabled, false);
    t.equal((await anonymous('POST', `/api/webhooks/trigger/${second}`)).statusCode, 404, 'disabled');
    const reEnabled = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: true });
    const third = reEnabled.json().webhookToken as string;
    t.not(third, second, 'disable and enable rotates');
    const rotateOff = await trustedApi('PATCH', `/api/scrapers/${venues?.id}`, { rotateWebhookToken: true });
    t.equal(rotateOff.statusCode, 400, 'nothing to rotate');

    for (const [label, body] of [
      ['env name with a dash', { envVars: { 'BAD-NAME': 'x' } }],
      ['env value not a string', { envVars: { A: { nested: 'x' } } }],
      ['manifest field', { schedule: '* * * * *' }],
      ['unknown field', { webhookTokenHash: 'x' }],
      ['dataset id 0', { targetDataset: 0 }],
    ] as const) {
      const response = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, body);
      t.equal(response.statusCode, 400, `${label}: ${response.body}`);
    }
    const missingDataset = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, {
      targetDataset: 999999,
    });
    t.equal(missingDataset.json().code, 'INVALID_REFERENCE');
    t.equal((await powerApi('PATCH', `/api/scrapers/${events?.id}`, { enabled: true })).statusCode, 404);
    t.equal((await trustedApi('PATCH', '/api/scrapers/999999', { enabled: true })).statusCode, 404);
    t.equal(
      (await trustedApi('GET', `/api/scrapers/${events?.id}`)).json().enabled,
      false,
      'refused edits changed nothing',
    );
    const byAdmin = await adminApi('PATCH', `/api/scrapers/${events?.id}`, { envVars: {} });
    t.same(byAdmin.json().doc.envVars, {}, 'admins manage every scraper');
  });

  await t.test('scraper runs: lists without logs, one run with them, cancel', async (t) => {
    const queue = async (scraperId: number) => {
      const run = await scrapers.runs.createQueued({
        scraperId,
        runId: crypto.randomUUID(),
        triggeredBy: 'manual',
        triggeredByUser: trusted.id,
        scheduledFor: null,
      });
      if (!run) throw new Error('no run');
      return run;
    };
    const done = await queue(events?.id ?? 0);
    await scrapers.runs.start(done.id);
    await scrapers.runs.finish(done.id, 'running', {
      status: 'success',
      exitCode: 0,
      durationMs: 1234,
      stdout: 'fetching <page 1>\n',
      stderr: 'warning: slow\n',
      error: null,
      errorCode: null,
      outputRows: 2,
      outputBytes: 40,
      resultFile: Buffer.from('title,date\nA,2026-01-01\n').toString('base64'),
    });
    const queued = await queue(venues?.id ?? 0);

    const list = await trustedApi('GET', '/api/scraper-runs?sort=-id');
    t.equal(list.statusCode, 200, list.body);
    t.same(
      list.json().docs.map((d: { id: number }) => d.id),
      [queued.id, done.id],
    );
    for (const doc of list.json().docs) {
      t.notOk('stdout' in doc || 'stderr' in doc || 'resultFile' in doc, 'no logs in lists');
    }
    const success = await trustedApi('GET', '/api/scraper-runs?where[status][equals]=success');
    t.same(
      success.json().docs.map((d: { id: number }) => d.id),
      [done.id],
    );
    t.equal(
      (await trustedApi('GET', `/api/scraper-runs?where[runId][equals]=${done.runId}`)).json().totalDocs,
      1,
    );
    const one = await trustedApi('GET', `/api/scraper-runs/${done.id}`);
    t.match(one.json(), {
      id: done.id,
      runId: done.runId,
      scraper: events?.id,
      repo: repoId,
      status: 'success',
      triggeredBy: 'manual',
      triggeredByUser: trusted.id,
      exitCode: 0,
      durationMs: 1234,
      outputRows: 2,
      stdout: 'fetching <page 1>\n',
      stderr: 'warning: slow\n',
      resultFile: Buffer.from('title,date\nA,2026-01-01\n').toString('base64'),
    });
    t.equal(
      (await trustedApi('GET', `/api/scrapers/${events?.id}`)).json().statistics.lastRunStatus,
      'success',
    );

    t.equal((await powerApi('GET', `/api/scraper-runs/${done.id}`)).statusCode, 404);
    t.equal((await powerApi('POST', `/api/scraper-runs/${queued.id}/cancel`)).statusCode, 404);
    t.equal((await powerApi('GET', '/api/scraper-runs')).json().totalDocs, 0);
    const cancel = await trustedApi('POST', `/api/scraper-runs/${queued.id}/cancel`);
    t.equal(cancel.statusCode, 200, cancel.body);
    t.match(cancel.json(), { cancelled: true, doc: { status: 'failed', errorCode: 'CANCELLED' } });
    const late = await trustedApi('POST', `/api/scraper-runs/${done.id}/cancel`);
    t.match(late.json(), { cancelled: false, doc: { status: 'success' } });
    t.equal((await trustedApi('POST', '/api/scraper-runs/999999/cancel')).statusCode, 404);
    const create = await trustedApi('POST', '/api/scraper-runs', { scraper: events?.id });
    t.equal(create.statusCode, 403);
    t.equal(create.json().code, 'RUNS_FROM_TRIGGERS');
  });

  await t.test("a run's import outcome: what its auto-import did, linked by its ingest file", async (t) => {
    const run = await scrapers.runs.createQueued({
      scraperId: events?.id ?? 0,
      runId: crypto.randomUUID(),
      triggeredBy: 'manual',
      triggeredByUser: trusted.id,
      scheduledFor: null,
    });
    if (!run) throw new Error('no run');
    t.equal((await trustedApi('GET', `/api/scraper-runs/${run.id}`)).json().import, null, 'no import yet');
    // Its auto-import, completed: one row new, one found stored already, one repeated in the file.
    const fileId = await completedScraperImport(db.pool, {
      internal: 1,
      external: 1,
      created: 1,
      updated: 0,
      duplicates: 2,
    });
    await scrapers.runs.recordImport(run.id, { ingestFileId: fileId });
    const outcome = {
      ingestFile: fileId,
      status: 'completed',
      rowsNew: 1,
      rowsUpdated: 0,
      rowsUnchanged: 1,
      reviewReasons: [],
    };
    t.same((await trustedApi('GET', `/api/scraper-runs/${run.id}`)).json().import, outcome);
    const listed = (await trustedApi('GET', `/api/scraper-runs?where[id][equals]=${run.id}`)).json().docs;
    t.same(listed[0]?.import, outcome, 'in lists too');
    const page = await trustedApi('GET', '/account/scrapers');
    t.equal(page.statusCode, 200);
    t.match(page.body, '1 new, 1 unchanged', '/account/scrapers shows what the import did');
    t.match(page.body, `href="/account/imports#import-${fileId}"`, 'and links to it');

    await db.pool.query(sql.unsafe`
      update ingest_files set status = 'needs-review' where id = ${fileId}`);
    await db.pool.query(sql.unsafe`
      update ingest_jobs set stage = 'needs-review', review_reasons = '["duplicate rate 67% over 50%: 2 of 3"]'
      where ingest_file_id = ${fileId}`);
    await db.pool.query(sql.unsafe`
      update ingest_job_stages set output = null, status = 'pending'
      where stage = 'create-events' and ingest_job_id in (select id from ingest_jobs where ingest_file_id = ${fileId})`);
    t.same(
      (await trustedApi('GET', `/api/scraper-runs/${run.id}`)).json().import,
      {
        ...outcome,
        status: 'needs-review',
        rowsNew: null,
        rowsUpdated: null,
        rowsUnchanged: null,
        reviewReasons: ['duplicate rate 67% over 50%: 2 of 3'],
      },
      'an import that waits says so, with why, and no rows yet',
    );
  });

  await t.test(
    'deleting a repo: refused while a scraper runs, then it goes with its scrapers and runs',
    async (t) => {
      const running = await scrapers.runs.createQueued({
        scraperId: events?.id ?? 0,
        runId: crypto.randomUUID(),
        triggeredBy: 'manual',
        triggeredByUser: trusted.id,
        scheduledFor: null,
      });
      await scrapers.runs.start(running?.id ?? 0);
      const refused = await trustedApi('DELETE', `/api/scraper-repos/${repoId}`);
      t.equal(refused.statusCode, 409, refused.body);
      t.equal(refused.json().code, 'SCRAPER_RUNNING');
      t.equal((await trustedApi('POST', `/api/scraper-runs/${running?.id}/cancel`)).json().cancelled, true);

      const deleted = await trustedApi('DELETE', `/api/scraper-repos/${repoId}`);
      t.equal(deleted.statusCode, 200, deleted.body);
      t.match(deleted.json(), { message: 'Deleted successfully.', doc: { id: repoId, slug: 'events' } });
      t.equal((await trustedApi('GET', `/api/scraper-repos/${repoId}`)).statusCode, 404);
      t.equal((await trustedApi('GET', `/api/scrapers?where[repo][equals]=${repoId}`)).json().totalDocs, 0);
      t.equal((await trustedApi('GET', '/api/scraper-runs')).json().totalDocs, 0);
      t.equal((await trustedApi('DELETE', `/api/scraper-repos/${repoId}`)).statusCode, 404);

      const freed = await trustedApi('POST', '/api/scraper-repos', uploadRepo('t4'));
      t.equal(freed.statusCode, 201, 'a deleted repo frees its place in the quota');
      const [a1] = (await adminApi('GET', '/api/scraper-repos?where[slug][equals]=t3')).json().docs;
      t.equal(
        (await adminApi('DELETE', `/api/scraper-repos/${a1.id}`)).statusCode,
        200,
        "admins delete anyone's repo",
      );
    },
  );
});
