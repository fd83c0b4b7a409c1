import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../fixtures/ingest/client.ts';

// Explore's download menu follows a background export (issue 36 §1) in Debian's Chromium: with
// EXPORT_SYNC_MAX_EVENTS below the view's events, a FlatGeobuf download is first answered 202; the
// page shows the job's progress under the menu, and downloads the file once the status redirects
// to it (web/explore/api.js#followBackgroundExports).

const CSV =
  'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,Alpha\n2026-01-02T00:00:00Z,48.8,2.3,Beta\n' +
  '2026-01-03T00:00:00Z,41.9,12.5,Gamma\n';

t.test('the download menu shows a background export, then downloads its file', async (t) => {
  const { app, catalogId, user } = await ingestApp(t, {}, true, { exportSyncMaxEvents: 1 });
  const doc = (
    (await upload(app, catalogId, { name: 'background.csv', content: CSV })).json() as { doc: UploadedDoc }
  ).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'completed');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  await page.goto(`${base}/account/imports`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  const slug = (await page.locator('[data-dataset-links]').getAttribute('data-dataset-links')) as string;
  await page.goto(`${base}/?datasets=${slug}`);

  const answers: Array<{ method: string; path: string; status: number }> = [];
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.pathname.startsWith('/api/v1/events.fgb') || url.pathname.startsWith('/api/v1/exports/'))
      answers.push({ method: response.request().method(), path: url.pathname, status: response.status() });
  });
  const link = page.locator('#download-all-fgb');
  for (let tries = 0; tries < 100 && !((await link.getAttribute('href')) ?? '').includes(slug); tries += 1)
    await page.waitForTimeout(100);
  const [file] = await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), link.click()]);
  const bytes = readFileSync(await file.path());
  t.same([...bytes.subarray(0, 4)], [0x66, 0x67, 0x62, 0x03], 'the FlatGeobuf file downloads');
  t.match(answers[0], { method: 'HEAD', path: '/api/v1/events.fgb', status: 202 }, 'first a background job');
  t.ok(
    answers.some((answer) => answer.path.startsWith('/api/v1/exports/')),
    'the page followed its status',
  );
  t.match(await page.textContent('#download-progress'), /FlatGeobuf: ready/, 'and says it is ready');
  await page.locator('.downloads').scrollIntoViewIfNeeded();
  await screenshots(t, page)('explore-background-export');
});
