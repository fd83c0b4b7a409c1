import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { systemClock } from '../../src/adapters/clock/system-clock.ts';
import { localSourceFiles } from '../../src/adapters/files/local-source-files.ts';
import { pgBossIngestQueue } from '../../src/adapters/jobs/ingest-worker.ts';
import { postgresIngestStore } from '../../src/adapters/postgres/ingest/ingest-store.ts';
import { runIngestJob } from '../../src/application/ingest/run-ingest-job.ts';
import { createIngestFile } from '../../src/application/ingest/create-ingest-file.ts';
import { parseIngestSettings } from '../../src/domain/ingest/settings.ts';
import { mkdirSync, writeFileSync } from 'node:fs';
import { keepScreenshot, launchChromium } from '../helpers/browser.ts';
import { countEvents, ingestApp, signIn, type UploadedDoc, waitForFile } from '../fixtures/ingest/client.ts';
import { unlimitedQuotas } from '../helpers/quotas.ts';

// The admin's import progress page in a real browser (Debian's Chromium, JavaScript on): an admin
// uploads a file, opens /dashboard/ingest while nothing has run yet, and watches the page follow
// the import to the end without reloading (its script polls the progress endpoint). With
// CHRONOMAP_SCREENSHOTS=1 the run also refreshes docs/screenshots/ingest-progress.png.
const ROWS = 20_000;

t.test('the import progress page follows a real import', async (t) => {
  // No workers: the test runs the job itself once the page is open, so the page is sure to see it pending.
  const { app, db, services, dataDir, catalogId } = await ingestApp(t, {}, false);
  const admin = await signIn(app, db.pool, { role: 'admin' });
  const other = await signIn(app, db.pool, { role: 'admin' });
  const lines = ['id,time,latitude,longitude,place'];
  for (let i = 0; i < ROWS; i++) {
    lines.push(
      `q${i},${new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString()},${(i % 170) - 85},${(i % 350) - 175},Place ${i % 40}`,
    );
  }
  const send = (token: string, name: string) => {
    const boundary = 'ingest-progress-test';
    const payload = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="catalog"\r\n\r\n${catalogId}\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/csv\r\n\r\n` +
        `${lines.join('\n')}\r\n--${boundary}--\r\n`,
    );
    return app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload,
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
        authorization: `Bearer ${token}`,
      },
    });
  };
  const uploaded = await send(admin.token, 'quakes-2024.csv');
  t.equal(uploaded.statusCode, 201, uploaded.body);
  const doc = (uploaded.json() as { doc: UploadedDoc }).doc;
  t.equal((await send(other.token, 'someone-else.csv')).statusCode, 201);

  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const scriptErrors: string[] = [];
  page.on('pageerror', (error) => scriptErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') scriptErrors.push(message.text());
  });

  await page.goto(`${base}/dashboard/ingest`);
  t.equal(new URL(page.url()).pathname, '/dashboard/login', 'sent to the login page');
  await page.fill('input[name=email]', admin.email);
  await page.fill('input[name=password]', admin.password);
  await page.click('button[type=submit]');
  await page.click('nav >> text=Imports');
  t.equal(new URL(page.url()).pathname, '/dashboard/ingest');
  t.equal(await page.textContent('h1'), 'Imports');
  const section = page.locator(`section.ingest-file[data-file-id="${doc.id}"]`);
  t.equal(await page.locator('section.ingest-file').count(), 1, "only the caller's files");
  t.equal(await section.locator('h2').textContent(), 'quakes-2024.csv');
  t.equal(await section.getAttribute('data-status'), 'pending');
  t.equal(
    await section
      .locator('progress[data-field=overall]')
      .evaluate((el) => (el as unknown as { value: number }).value),
    0,
  );
  t.equal(await section.locator('tr[data-stage]').count(), 7, 'one row per stage');

  // The import runs now, in small batches, while the page is open.
  const jobId = doc.jobs[0]?.id as number;
  const run = runIngestJob(
    {
      store: postgresIngestStore(db.pool),
      files: localSourceFiles(path.join(dataDir, 'ingest')),
      geocoder: null,
      queue: pgBossIngestQueue(services.boss),
      countsRefresh: pgBossIngestQueue(services.boss),
      quotas: unlimitedQuotas,
      deferCountsMinRows: 20_000,
      deferredWriters: 2,
      clock: systemClock,
      retry: { baseDelayMs: 100, backoffMultiplier: 2, maxDelayMs: 500, maxAttempts: 1 },
      batchSize: 250,
    },
    jobId,
  );
  // The screenshot shows the import under way when the page catches it there (it usually does).
  // Polled from here, not with page.waitForFunction: Playwright evaluates its predicate with eval in
  // the page, which the page's CSP refuses (reported as a console error: the script-error check
  // below then failed now and then).
  let racing = true;
  const underWay = (async () => {
    const bar = page.locator(`section[data-file-id="${doc.id}"] progress[data-field=overall]`);
    const deadline = Date.now() + 60_000;
    while (racing && Date.now() < deadline) {
      const value = await bar
        .evaluate((el) => (el as unknown as { value: number }).value, undefined, { timeout: 1000 })
        .catch(() => null);
      if (value !== null && value > 40 && value < 95) return true;
      await sleep(100);
    }
    return null;
  })();
  await Promise.race([run, underWay]);
  racing = false;
  keepScreenshot(t, await page.screenshot({ fullPage: true }), 'ingest-progress');
  t.equal(await run, 'completed');

  // Updated in place by the page's script: same document, no reload.
  await page.waitForSelector(`section.ingest-file[data-file-id="${doc.id}"][data-status="completed"]`, {
    timeout: 60_000,
  });
  t.equal(new URL(page.url()).pathname, '/dashboard/ingest');
  t.equal(await section.locator('[data-field=status]').textContent(), 'completed');
  t.equal(await section.locator('[data-field=overall-text]').textContent(), '100 %');
  t.equal(
    await section
      .locator('progress[data-field=overall]')
      .evaluate((el) => (el as unknown as { value: number }).value),
    100,
  );
  t.equal(
    await section.locator('tr[data-stage="create-events"] [data-field=stage-status]').textContent(),
    'completed',
  );
  t.match(
    await section.locator('tr[data-stage="create-events"] [data-field=rows-per-second]').textContent(),
    /^[\d,]+ rows\/s$/,
  );
  t.same(scriptErrors, [], 'no script errors (the CSP allows the page script)');
  t.equal(await countEvents(db.pool, doc.datasets[0] as number), ROWS);

  t.equal(
    await section.locator('tr[data-stage="create-events"] [data-field=rows]').textContent(),
    '20,000 / 20,000',
    "the stage's rows, updated by the script",
  );

  await page.reload();
  t.equal(
    (await section.locator('tr[data-stage="create-events"] [data-field=batches]').textContent())?.trim(),
    '80 / 80',
    'batches of the finished stage, server-rendered',
  );
  t.equal(
    (await section.locator('tr[data-stage="analyze-duplicates"] [data-field=rows]').textContent())?.trim(),
    '20,000 / 20,000',
    'the rows of the file',
  );

  // Not for other users: a non-admin gets the dashboard's 403.
  const user = await signIn(app, db.pool, { role: 'user' });
  const forbidden = await app.inject({
    method: 'GET',
    url: '/dashboard/ingest',
    headers: { authorization: `Bearer ${user.token}` },
  });
  t.equal(forbidden.statusCode, 403);
});

t.test('a failed stage shows failed and a job waiting for review shows needs-review waiting', async (t) => {
  const setup = await ingestApp(t);
  const { app, db, services, dataDir, catalogId } = setup;
  const admin = await signIn(app, db.pool, { role: 'admin' });
  // Automated imports (a scheduled feed's files) of the admin's: only they pass through needs-review.
  const feed = async (name: string, content: string, settings: unknown, dataset: number | 'new') => {
    const relative = `${name}-${Math.random().toString(36).slice(2)}.csv`;
    mkdirSync(path.join(dataDir, 'ingest'), { recursive: true });
    writeFileSync(path.join(dataDir, 'ingest', relative), content);
    const created = await createIngestFile(
      {
        store: postgresIngestStore(db.pool),
        queue: pgBossIngestQueue(services.boss),
        quotas: unlimitedQuotas,
      },
      {
        originalName: `${name}.csv`,
        storedPath: relative,
        sizeBytes: content.length,
        mimeType: 'text/csv',
        format: 'csv',
        source: 'scheduled',
        catalogId,
        userId: admin.id,
        settings: parseIngestSettings(settings, dataset),
        sheets: [null],
      },
    );
    return waitForFile(app, created.file.id);
  };
  const CSV = 'id,time,latitude,longitude\na,2024-01-01T00:00:00Z,1,2\nb,2024-01-02T00:00:00Z,3,4\n';
  const broken = await feed('broken-feed', CSV, { fieldMapping: { timestamp: 'missing' } }, 'new');
  t.equal(broken.status, 'failed');
  const first = await feed('stations', CSV, {}, 'new');
  t.equal(first.status, 'completed');
  const wider = 'id,time,latitude,longitude,depth\nc,2024-01-03T00:00:00Z,5,6,7\n';
  const review = await feed('stations-wider', wider, {}, first.jobs[0]?.datasetId as number);
  t.equal(review.status, 'needs-review');

  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const scriptErrors: string[] = [];
  page.on('pageerror', (error) => scriptErrors.push(error.message));
  await page.goto(`${base}/dashboard/login`);
  await page.fill('input[name=email]', admin.email);
  await page.fill('input[name=password]', admin.password);
  await page.click('button[type=submit]');
  await page.goto(`${base}/dashboard/ingest`);
  const stageStatus = (fileId: number | string, stage: string) =>
    page
      .locator(`section[data-file-id="${fileId}"] tr[data-stage="${stage}"] [data-field=stage-status]`)
      .textContent();
  t.equal(
    await stageStatus(broken.id, 'detect-schema'),
    'failed',
    'the stage it failed at, not "in progress"',
  );
  t.equal(await stageStatus(broken.id, 'analyze-duplicates'), 'completed');
  t.equal(await stageStatus(broken.id, 'validate-schema'), 'pending', 'what never ran');
  t.equal(await stageStatus(review.id, 'needs-review'), 'waiting', 'waiting for review, not "completed"');
  t.equal(await stageStatus(review.id, 'create-events'), 'pending');
  t.equal(await stageStatus(first.id, 'needs-review'), 'completed', 'a review passed is completed');
  keepScreenshot(t, await page.screenshot({ fullPage: true }), 'ingest-progress-stopped');
  t.same(scriptErrors, []);
});
