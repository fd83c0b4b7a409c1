import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../fixtures/ingest/client.ts';

// Issue 28 §5 in a real browser (Debian's Chromium): an import with two addresses the offline
// gazetteer cannot place. My imports says so and links to the job's geocoding page, which counts
// and lists the two rows, gives them as CSV, and places them by the coordinate columns the owner
// picks. With CHRONOMAP_SCREENSHOTS=1 the run refreshes docs/screenshots/geocoding-outcome.png.

const CSV = [
  'time,title,place,north,east',
  '2026-01-01T00:00:00Z,Reunion,Berlin,,',
  '2026-01-02T00:00:00Z,Fair,Paris,,',
  '2026-01-03T00:00:00Z,Picnic,Qwxzzy Nowhere,51.2,6.8',
  '2026-01-04T00:00:00Z,Concert,Zzyzzq Field,48.1,11.6',
  '2026-01-05T00:00:00Z,Market,Madrid,,',
].join('\n');

t.test('the rows not placed: seen, downloaded and placed by coordinate columns', async (t) => {
  const { app, catalogId, user } = await ingestApp(t);
  const doc = (
    (await upload(app, catalogId, { name: 'gatherings.csv', content: CSV })).json() as { doc: UploadedDoc }
  ).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'completed');
  const jobId = doc.jobs[0]?.id as number;

  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const page = await (
    await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
  ).newPage();
  await page.goto(`${base}/account/imports`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');

  const summary = page.locator(`[data-job-id="${jobId}"] [data-field="geocoding-summary"]`);
  t.match(await summary.textContent(), /3 located,\s+2 not found,\s+0 low confidence/);
  await summary.locator('a').click();
  t.equal(new URL(page.url()).pathname, `/account/imports/jobs/${jobId}/geocoding`);

  const count = (name: string) => page.textContent(`[data-count="${name}"]`);
  t.same([await count('located'), await count('not-found'), await count('low-confidence')], ['3', '2', '0']);
  const rows = page.locator('table[aria-label="Rows not placed"] tbody tr');
  t.same(await rows.allInnerTexts(), ['3\tQwxzzy Nowhere\tnot found', '4\tZzyzzq Field\tnot found']);

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('[data-link="unplaced-csv"]'),
  ]);
  t.equal(download.suggestedFilename(), `import-job-${jobId}-unplaced.csv`);
  const lines = readFileSync(await download.path(), 'utf8')
    .trimEnd()
    .split('\r\n');
  t.same(lines, [
    'row,address,reason,candidate,candidateCountry,candidateRegion,confidence',
    '3,Qwxzzy Nowhere,not-found,,,,',
    '4,Zzyzzq Field,not-found,,,,',
  ]);
  await screenshots(t, page)('geocoding-outcome');

  const byCoordinates = page.locator('form[data-form="coordinates"]');
  await byCoordinates.locator('button[type=submit]').click();
  t.match(await page.textContent('.flash.error'), /choose a latitude and a longitude column/);
  t.equal(await rows.count(), 2, 'a fix without columns changes nothing');
  await byCoordinates.locator('select[name=latitude]').selectOption('north');
  await byCoordinates.locator('select[name=longitude]').selectOption('east');
  await byCoordinates.locator('button[type=submit]').click();
  t.equal(new URL(page.url()).pathname, `/account/imports/jobs/${jobId}/geocoding`);
  t.match(await page.textContent('.flash.ok'), /Placed 2 rows; 0 not placed/);
  t.same([await count('located'), await count('not-found'), await count('low-confidence')], ['5', '0', '0']);
  t.equal(await rows.count(), 0);
  t.match(await page.textContent('.card'), /Every row is placed/);
});
