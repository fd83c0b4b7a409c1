import { readFileSync } from 'node:fs';
import t from 'tap';
import { screenshots } from '../helpers/browser.ts';
import { importedSession } from '../helpers/browser-imported.ts';

// Explore's download menu follows a background export (issue 36 §1) in Debian's Chromium: with
// EXPORT_SYNC_MAX_EVENTS below the view's events, a FlatGeobuf download is first answered 202; the
// page shows the job's progress under the menu, and downloads the file once the status redirects
// to it (web/explore/api.js#followBackgroundExports).

const CSV =
  'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,Alpha\n2026-01-02T00:00:00Z,48.8,2.3,Beta\n' +
  '2026-01-03T00:00:00Z,41.9,12.5,Gamma\n';

t.test('the download menu shows a background export, then downloads its file', async (t) => {
  const { base, page } = await importedSession(
    t,
    { name: 'background.csv', content: CSV },
    { exportSyncMaxEvents: 1 },
  );
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
