import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import t from 'tap';
import { screenshots } from '../helpers/browser.ts';
import { importedSession } from '../helpers/browser-imported.ts';
import { reloadUntil } from '../helpers/page-polling.ts';

// "Download in the browser" (issue 28 §6) in Debian's Chromium: from My imports, a completed
// import's CSV and GeoJSON links download the dataset's events and its Explore link opens Explore
// filtered to the dataset, whose download menu offers every export format with that filter;
// /account prepares the export of the whole account and its link downloads
// the ZIP. With CHRONOMAP_SCREENSHOTS=1 the run also refreshes docs/screenshots/account.png and
// explore-downloads.png.

const CSV =
  'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,Alpha\n2026-01-02T00:00:00Z,48.8,2.3,Beta\n';

/** Clicks `selector`, which must start a download, and returns the downloaded bytes. */
async function download(page: Page, selector: string): Promise<Buffer> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync(await file.path());
}

t.test("My imports' data links and the account export download in the browser", async (t) => {
  const { base, page } = await importedSession(t, { name: 'downloads.csv', content: CSV });
  t.equal(new URL(page.url()).pathname, '/account/imports', 'the login comes back to My imports');

  const links = page.locator('[data-dataset-links]');
  t.equal(await links.count(), 1, 'the completed import links its data');
  const slug = (await links.getAttribute('data-dataset-links')) as string;
  t.match(
    await page.getAttribute('a[data-settings-link]', 'href'),
    /^\/account\/datasets\/\d+\/settings$/,
    "and its dataset's privacy and provenance settings",
  );

  const csv = (await download(page, '[data-dataset-links] a[data-link=csv]'))
    .toString('utf8')
    .trim()
    .split('\r\n');
  t.equal(csv.length, 3, 'the CSV: a header and both events');
  t.ok(csv[1]?.includes('Alpha') || csv[2]?.includes('Alpha'), 'with their titles');
  const geojson = JSON.parse(
    (await download(page, '[data-dataset-links] a[data-link=geojson]')).toString('utf8'),
  ) as {
    type: string;
    features: { properties: { dataset: string } }[];
  };
  t.equal(geojson.type, 'FeatureCollection');
  t.same(
    geojson.features.map((f) => f.properties.dataset),
    [slug, slug],
    "the GeoJSON: both events, the dataset's",
  );

  await page.click('[data-dataset-links] a[data-link=explore]');
  const explore = new URL(page.url());
  t.equal(explore.pathname, '/', 'Explore');
  t.equal(explore.searchParams.get('datasets'), slug, 'filtered to the dataset');

  // Explore's download menu: every format of /api/v1/events.<format>, with the page's filters.
  const fgbLink = page.locator('#download-all-fgb');
  // The links get the filters once the page has read them (polled: the page forbids eval).
  for (let tries = 0; tries < 100 && !((await fgbLink.getAttribute('href')) ?? '').includes(slug); tries += 1)
    await page.waitForTimeout(100);
  const menu = page.locator('a[id^="download-all-"]');
  const formats: Array<{ format: string | null; href: string }> = [];
  for (let index = 0; index < (await menu.count()); index += 1) {
    const link = menu.nth(index);
    formats.push({
      format: await link.getAttribute('data-download-format'),
      href: new URL((await link.getAttribute('href')) ?? '', base).href,
    });
  }
  t.same(
    formats.map(({ format }) => format),
    ['csv', 'geojson', 'geojsonseq', 'kml', 'gpkg', 'fgb', 'parquet', 'pmtiles'],
    'the menu offers every export format',
  );
  t.ok(
    formats.every(({ format, href }) => {
      const url = new URL(href);
      return url.pathname === `/api/v1/events.${format}` && url.searchParams.get('datasets') === slug;
    }),
    'each with the filters of the page',
  );
  await page.locator('.downloads').scrollIntoViewIfNeeded();
  await screenshots(t, page)('explore-downloads');
  const starts: Record<string, string> = {
    geojsonseq: '\x1e{',
    kml: '<?xml',
    gpkg: 'SQLite format 3',
    fgb: 'fgb\x03',
    parquet: 'PAR1',
    pmtiles: 'PMTiles',
  };
  for (const [format, start] of Object.entries(starts)) {
    const bytes = await download(page, `#download-all-${format}`);
    t.equal(bytes.subarray(0, start.length).toString('latin1'), start, `${format} downloads`);
  }
  const seq = (await download(page, '#download-all-geojsonseq')).toString('utf8');
  t.equal(seq.split('\x1e').length - 1, 2, "the GeoJSON sequence: the dataset's two events");

  await page.goto(`${base}/account`);
  t.match(await page.textContent('h1'), 'Your account');
  await page.click('#account-export-request');
  t.match(await page.textContent('.flash.ok'), /Export requested/);
  await reloadUntil(page, '#account-export-download');
  await screenshots(t, page)('account');
  const zip = await download(page, '#account-export-download');
  t.equal(zip.subarray(0, 2).toString(), 'PK', 'the account export downloads as a ZIP');
  t.ok(zip.includes(Buffer.from('events.csv')), 'with the events in it');
});
