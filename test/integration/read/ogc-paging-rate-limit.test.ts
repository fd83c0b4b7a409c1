import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { policyFile } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { insertLargeEvents } from '../../helpers/v1-fixture.ts';

// Issue 35 §1: pages of OGC items cost rows (config/quotas.yaml pagedRows), not requests. GDAL's
// OAPIF driver pages with its default page size of 10 through a whole anonymous collection of
// 3,000 features (300 pages: three times the old anonymous burst of 100 requests) and gets every
// feature; a client that only pages is still refused past the stated hourly bound of rows.

const run = promisify(execFile);
const FEATURES = 3000;
const LONG = 1_000_000;

type Windows = Record<string, { seconds: number; limit: number }>;
const shipped = parse(
  readFileSync(path.join(import.meta.dirname, '../../../config/quotas.yaml'), 'utf8'),
) as {
  rateLimits: { anonymous: Windows };
  pagedRows: { minimumPerPage: number; anonymous: Windows };
};

t.test('ogr2ogr with GDAL default page size copies a whole anonymous collection', async (t) => {
  // The shipped limits, as an anonymous client meets them.
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t) } });
  await insertLargeEvents(db.pool, FEATURES, 8);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-paging-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const gpkg = path.join(dir, 'all.gpkg');
  // No PAGE_SIZE: GDAL asks limit=10 itself, and follows every next link.
  await run('ogr2ogr', ['-f', 'GPKG', gpkg, `OAPIF:http://127.0.0.1:${port}/ogc`, 'large-rows'], {
    timeout: 300_000,
    env: { ...process.env, GDAL_HTTP_TIMEOUT: '30', CPL_CURL_VERBOSE: 'NO' },
  });
  const { stdout } = await run('ogrinfo', [
    '-ro',
    '-q',
    gpkg,
    '-sql',
    'select count(*) as n from "large-rows"',
  ]);
  t.equal(Number(/n \(\w+\) = (\d+)/.exec(stdout)?.[1]), FEATURES, 'every feature is in the GeoPackage');

  // The pages were counted in rows, not in the request windows: GDAL's few other requests (landing
  // page, conformance, collections) are all the request windows saw.
  const probe = await app.inject({ method: 'GET', url: '/ogc/collections', remoteAddress: '127.0.0.1' });
  t.equal(probe.statusCode, 200);
  const burst = shipped.rateLimits.anonymous.burst?.limit ?? 0;
  t.ok(FEATURES / 10 > burst, `${FEATURES / 10} pages are more than the old burst of ${burst} requests`);
  t.ok(
    Number(probe.headers['x-ratelimit-remaining']) >= burst - 20,
    `the pages took nothing from the request windows (${String(probe.headers['x-ratelimit-remaining'])} of ${burst} left)`,
  );
  t.match(String(probe.headers['ratelimit-policy']), /^"burst";q=\d+;w=10, "hourly";q=\d+;w=3600/);
  const page = await app.inject({
    method: 'GET',
    url: '/ogc/collections/large-rows/items?limit=1',
    remoteAddress: '127.0.0.1',
  });
  t.equal(page.statusCode, 200);
  t.match(
    String(page.headers['ratelimit-policy']),
    /^"rows-burst";q=10000;w=10, "rows-hourly";q=120000;w=3600/,
  );
  // The hourly row window has counted at least the 3,000 rows GDAL read and this page's minimum of 10.
  const left = /^"rows-(\w+)";r=(\d+);t=(\d+)$/.exec(String(page.headers.ratelimit));
  t.ok(left, `RateLimit names a rows window: ${String(page.headers.ratelimit)}`);
  const remainingHourly = 120_000 - FEATURES - 10;
  t.ok(Number(left?.[2]) <= remainingHourly, 'every page was counted in rows');
});

t.test('a client that only pages is refused past the stated bound of rows an hour', async (t) => {
  const hourly = shipped.pagedRows.anonymous.hourly?.limit ?? 0;
  t.equal(hourly, 120_000, 'the bound docs/api-v1.md states');
  // The shipped hourly row limit alone (no burst window), so the pages can come as fast as they are
  // answered, in a window long enough (about 11.6 days, fixed windows start at its multiples) that
  // the test never straddles two; the request windows are left as shipped and are not what refuses.
  const { app, db } = await testApp(t, {
    config: {
      quotasFile: policyFile(t, (raw) => {
        (raw.pagedRows as { anonymous: Windows }).anonymous = { hourly: { seconds: LONG, limit: hourly } };
      }),
    },
  });
  await insertLargeEvents(db.pool, 1000, 8);
  const page = (limit: number) =>
    app.inject({
      method: 'GET',
      url: `/ogc/collections/large-rows/items?limit=${limit}`,
      remoteAddress: '192.0.2.44',
    });
  const tiny = await page(1);
  t.equal(tiny.statusCode, 200);
  t.match(
    String(tiny.headers.ratelimit),
    new RegExp(`^"rows-hourly";r=${hourly - 10};t=\\d+$`),
    'a page of 1 costs 10 rows',
  );
  const full = hourly / 1000 - 1; // the rest of the bound in pages of 1000 (the first page took 10)
  let answered = 0;
  for (let i = 0; i < full; i += 1) {
    const response = await page(5000); // clamped to 1000: costs 1000
    if (response.statusCode === 200) answered += 1;
  }
  t.equal(answered, full, `${full} pages of 1000 rows are answered within the bound`);
  const over = await page(1000);
  t.equal(over.statusCode, 429, 'the page past the bound is refused');
  t.match(over.json(), { success: false, error: 'Rate limit exceeded', limitType: 'hourly' });
  t.ok(Number(over.headers['retry-after']) >= 1, 'with Retry-After in seconds');
  t.match(String(over.headers.ratelimit), /^"rows-hourly";r=0;t=\d+$/);
  t.match(String(over.headers['ratelimit-policy']), `"rows-hourly";q=${hourly};w=${LONG}`);
  const other = await app.inject({ method: 'GET', url: '/ogc/collections', remoteAddress: '192.0.2.44' });
  t.equal(other.statusCode, 200, 'requests that are not pages still have their own budget');
});
