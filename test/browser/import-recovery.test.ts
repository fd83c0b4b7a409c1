import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import t from 'tap';
import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { reloadUntil } from '../helpers/page-polling.ts';
import { ingestApp, signIn, upload, type UploadedDoc, waitForFile } from '../fixtures/ingest/client.ts';

// Recovery from the pages in a real browser (Debian's Chromium): an import whose geocoder was down
// fails after its automatic retries; its owner retries it from My imports, an admin re-queues
// another from /dashboard/ingest (the spec's manual re-queue), and a stranger's post on the owner's
// job is the 404 page. Then the scheduled imports page: create (the webhook URL shown once), run
// now, edit, disable, enable, delete. With CHRONOMAP_SCREENSHOTS=1 the run also refreshes
// docs/screenshots/my-imports-failed.png, ingest-requeue.png and scheduled-imports.png.

const countAllEvents = (pool: DatabasePool) =>
  pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from events`);

const PLACES = 'time,place\n2026-01-01T00:00:00Z,Somewhere\n2026-01-02T00:00:00Z,Elsewhere\n';

async function loggedIn(
  browser: Browser,
  base: string,
  path: string,
  who: { email: string; password: string },
) {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${base}${path}`);
  await page.fill('input[name=email]', who.email);
  await page.fill('input[name=password]', who.password);
  await page.click('button[type=submit]');
  return page;
}

t.test('a failed import is retried by its owner and re-queued by an admin', async (t) => {
  let failing = true;
  const geocoder = http.createServer((_request, response) => {
    if (failing) response.writeHead(503).end('busy');
    else
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end('[{"lat":"1","lon":"2","importance":0.9}]');
  });
  await new Promise<void>((resolve) => geocoder.listen(0, '127.0.0.1', resolve));
  t.teardown(() => geocoder.close());
  const url = `http://127.0.0.1:${(geocoder.address() as AddressInfo).port}`;
  const { app, db, catalogId, user } = await ingestApp(t, {
    geocoder: { kind: 'nominatim', url, requestsPerSecond: 200, timeoutMs: 1000, minConfidence: 0.5 },
  });
  const send = async (name: string) =>
    ((await upload(app, catalogId, { name, content: PLACES })).json() as { doc: UploadedDoc }).doc;
  const retried = await send('places-monday.csv');
  const requeued = await send('places-tuesday.csv');
  t.equal((await waitForFile(app, retried.id)).status, 'failed');
  t.equal((await waitForFile(app, requeued.id)).status, 'failed');
  failing = false;

  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);

  const owner = await loggedIn(browser, base, '/account/imports', user);
  const jobId = retried.jobs[0]?.id as number;
  const actions = owner.locator(`[data-job-actions="${jobId}"]`);
  t.match(await actions.locator('.what').textContent(), /geocod/i, 'what went wrong, in words');
  t.match(await actions.locator('.advice').textContent(), /every automatic retry/);
  await screenshots(t, owner)('my-imports-failed');
  await actions.locator('button', { hasText: 'Retry' }).click();
  t.match(await owner.textContent('.flash.ok'), /Retry scheduled: job \d+ restarts at geocode-batch/);
  await reloadUntil(owner, `section.ingest-file[data-file-id="${retried.id}"][data-status="completed"]`);

  // Someone else's job is not found, even with a valid form token of their own.
  const strangerUser = await signIn(app, db.pool, { role: 'user' });
  const stranger = await loggedIn(browser, base, '/account/imports', strangerUser);
  const token = await stranger.getAttribute('input[name=_csrf]', 'value');
  const refused = await stranger.request.post(`${base}/account/imports/jobs/${jobId}/retry`, {
    form: { _csrf: token as string },
    maxRedirects: 0,
  });
  t.equal(refused.status(), 404, "another user's import is a 404");
  t.equal(await stranger.locator('section.ingest-file').count(), 0, 'and is not listed for them');

  // The admin's manual re-queue: the job resumes at the task that failed, at once.
  const adminUser = await signIn(app, db.pool, { role: 'admin' });
  const admin = await loggedIn(browser, base, '/dashboard/login', adminUser);
  await admin.goto(`${base}/dashboard/ingest`);
  const requeuedJob = requeued.jobs[0]?.id as number;
  const row = admin.locator(`table.failed-jobs tr[data-job-id="${requeuedJob}"]`);
  t.equal(await row.locator('td').nth(2).textContent(), 'geocode-batch', 'failed at geocode-batch');
  await screenshots(t, admin)('ingest-requeue');
  await row.locator('button', { hasText: 'Re-queue' }).click();
  t.equal(new URL(admin.url()).pathname, '/dashboard/ingest');
  t.match(await admin.textContent('.flash.ok'), new RegExp(`job ${requeuedJob} re-queued at geocode-batch`));
  t.equal((await waitForFile(app, requeued.id, (p) => p.status === 'completed')).status, 'completed');
  await admin.reload();
  t.equal(await row.count(), 0, 'no longer listed as failed');

  // Not for a user who is not an admin: refused in words, nothing queued.
  const ownerToken = await owner.getAttribute('input[name=_csrf]', 'value');
  const notAdmin = await owner.request.post(`${base}/dashboard/ingest/jobs/${jobId}/requeue`, {
    form: { _csrf: ownerToken as string },
    maxRedirects: 0,
  });
  t.equal(notAdmin.status(), 403, 'the dashboard form token is not the account pages one');
});

t.test('scheduled imports: create, run now, edit, disable, enable, delete', async (t) => {
  // "The web" is a server on loopback, which this app's fetcher may reach (a test-only setting).
  const stations = http.createServer((request, response) => {
    if (request.url?.split('?')[0] !== '/stations.csv') return response.writeHead(404).end('no such file');
    response
      .writeHead(200, { 'content-type': 'text/csv' })
      .end('observed,lat,lon,station\n2026-03-01T00:00:00Z,52.5,13.4,Berlin\n');
  });
  await new Promise<void>((resolve) => stations.listen(0, '127.0.0.1', resolve));
  t.teardown(() => stations.close());
  const web = `http://127.0.0.1:${(stations.address() as AddressInfo).port}`;
  const { app, db, user } = await ingestApp(t, {
    fetch: { maxBytes: 1024 * 1024, timeoutMs: 3000, allowPrivateAddresses: true },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const page = await loggedIn(browser, base, '/account/scheduled-imports', user);
  t.equal(await page.textContent('h1'), 'Scheduled imports');

  await page.click('summary:has-text("New scheduled import")');
  await page.fill('input[name=name]', 'Weather stations');
  await page.fill('input[name=url]', `${web}/missing.csv`);
  await page.click('#preview-url');
  await page.waitForSelector('#url-preview.error');
  t.match(
    await page.textContent('#url-preview'),
    /URL_FETCH_FAILED|404/,
    'a file that is not there, in words',
  );
  await page.fill('input[name=url]', `${web}/stations.csv`);
  await page.click('#preview-url');
  await page.waitForSelector('#url-preview.preview');
  t.match(await page.textContent('#url-preview'), /observed \(date\), lat \(number\)/, "the file's columns");
  t.equal(await page.inputValue('input[name="mapping.timestamp"]'), 'observed', 'its time column detected');
  await page.fill('input[name=schedule]', '0 6 * * *');
  await page.click('button:has-text("Create")');
  const webhook = await page.textContent('[data-field=webhook-url]');
  // Absolute, as a feed's sender needs it (the address the browser used: no PUBLIC_BASE_URL here).
  const webhookPattern = new RegExp(`^${base.replaceAll('.', '\\.')}/api/webhooks/trigger/[0-9a-f]{64}$`);
  t.match(webhook, webhookPattern, 'the absolute webhook URL, shown once');
  await page.goto(`${base}/account/scheduled-imports`);
  t.equal(await page.locator('[data-field=webhook-url]').count(), 0, 'and never again');
  const card = page.locator('section.schedule').first();
  t.match(await card.locator('h2').textContent(), /Weather stations\s+enabled/);

  // An unchanged feed run three times: three completed imports, no review, the row stored once.
  const newest = 'section.schedule table.runs tbody tr:first-child';
  for (let run = 1; run <= 3; run++) {
    await card.locator('button', { hasText: 'Run now' }).click();
    t.match(await page.textContent('.flash.ok'), /^Run \d+ queued\.$/);
    t.match(await card.locator('table.runs tbody tr').first().textContent(), /manual/, 'the run is listed');
    // Settled: its import completed, or waits for a review (which it must not).
    await reloadUntil(
      page,
      `${newest} .badge.completed, ${newest} .badge.needs-review, ${newest} .badge.failed`,
    );
    t.equal(await page.locator(`${newest} .badge.completed`).count(), 1, `run ${run}: completed, no review`);
  }
  const rows = (await card.locator('table.runs tbody tr').allTextContents()).map((row) =>
    row.replace(/\s+/g, ' ').trim(),
  );
  t.match(
    rows,
    [
      /manual imported completed 0 new, 1 unchanged import #\d+/,
      /manual imported completed 0 new, 1 unchanged import #\d+/,
      /manual imported completed 1 new, 0 unchanged import #\d+/,
    ],
    'each run: the fetch, the import completed with its rows new and unchanged, and the import it made',
  );
  const link = await card.locator('table.runs a').first().getAttribute('href');
  t.match(link, /^\/account\/imports#import-\d+$/, 'linked to the import on My imports');
  t.equal(await countAllEvents(db.pool), 1, 'the one row of the feed, stored once');

  await card.locator('summary', { hasText: 'Edit' }).click();
  await card.locator('input[name=schedule]').fill('30 7 * * 1');
  const feedUrl = await card.locator('input[name=url]').inputValue();
  await card.locator('input[name=url]').fill(`${feedUrl}?edited=1`);
  await card.locator('input[name="mapping.timestamp"]').fill('observed');
  t.equal(await card.locator('select[name=reviewDuplicates]').inputValue(), 'first-run', 'the default');
  await card.locator('select[name=reviewDuplicates]').selectOption('always');
  await card.locator('button', { hasText: 'Save' }).click();
  t.equal(await page.textContent('.flash.ok'), 'Saved Weather stations.');
  t.match(await card.textContent(), /30 7 \* \* 1/);
  t.match(await card.locator('code').first().textContent(), /\?edited=1$/, 'the URL is edited');
  await card.locator('summary', { hasText: 'Edit' }).click();
  t.equal(
    await card.locator('input[name="mapping.timestamp"]').inputValue(),
    'observed',
    'the time column is kept',
  );
  t.equal(
    await card.locator('select[name=reviewDuplicates]').inputValue(),
    'always',
    'and the review choice',
  );
  await card.locator('input[name=url]').fill('ftp://example.org/a.csv');
  await card.locator('button', { hasText: 'Save' }).click();
  t.match(await page.textContent('.flash.error'), /http/, 'a bad URL is refused in words');
  t.match(await card.locator('code').first().textContent(), /\?edited=1$/, 'and nothing changed');
  await card.locator('summary', { hasText: 'Edit' }).click();
  await card.locator('input[name=schedule]').fill('not a cron');
  await card.locator('button', { hasText: 'Save' }).click();
  t.ok(await page.isVisible('.flash.error'), 'a bad schedule is refused in words');

  await card.locator('button', { hasText: 'Disable' }).click();
  t.match(await page.textContent('.flash.ok'), /Disabled Weather stations/);
  t.match(await card.locator('h2').textContent(), /disabled/);
  await screenshots(t, page)('scheduled-imports');
  await card.locator('button', { hasText: 'Enable' }).click();
  t.match(await page.textContent('[data-field=webhook-url]'), webhookPattern);
  t.not(await page.textContent('[data-field=webhook-url]'), webhook, 'a new webhook URL');

  await page.goto(`${base}/account/scheduled-imports`);
  await page.locator('section.schedule').first().locator('button', { hasText: 'Delete' }).click();
  t.equal(await page.textContent('.flash.ok'), 'Deleted Weather stations.');
  t.equal(await page.locator('section.schedule').count(), 0);
});
