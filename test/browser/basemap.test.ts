import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { writePmtiles, type PmtilesTile } from '../../src/adapters/files/pmtiles-writer.ts';
import { type DatabasePool, sql } from '../../src/adapters/postgres/database.ts';
import { composeServices } from '../../src/compose.ts';
import { policyFile, unlimitedAnonymousReads } from '../helpers/accounts.ts';
import { testApp, testConfig } from '../helpers/app.ts';
import { keepScreenshot, launchChromium } from '../helpers/browser.ts';
import { testDatabase } from '../helpers/database.ts';

// The offline basemap in a real browser (Debian's Chromium, WebGL through SwiftShader): a small
// PMTiles archive in the Protomaps schema, its tiles encoded by PostGIS (ST_AsMVT, the service's
// own vector-tile encoder) and laid out by our writer, served by the whole service on loopback and
// drawn by the Explore page with the style, glyphs and pmtiles reader the service serves. Every
// request the page makes must stay on the service. Without an archive, the default map names towns.
// With CHRONOMAP_SCREENSHOTS=1 the run also refreshes docs/screenshots/basemap*.png.

/** Where the test's map is: Berlin, with a lake, an avenue and a town made up around it. */
const CENTRE = { lng: 13.4, lat: 52.52 };

/** One tile in the Protomaps basemap schema: earth everywhere, a lake, a major road, a town. */
async function protomapsTile(pool: DatabasePool, z: number, x: number, y: number): Promise<Uint8Array> {
  const point = (lng: number, lat: number) =>
    sql.fragment`st_transform(st_setsrid(st_makepoint(${lng}, ${lat}), 4326), 3857)`;
  const layer = (
    name: string,
    properties: ReturnType<typeof sql.fragment>,
    geometry: ReturnType<typeof sql.fragment>,
  ) =>
    sql.fragment`(select coalesce(st_asmvt(q, ${name}, 4096, 'geom'), '') from (
      select ${properties}, st_asmvtgeom(${geometry}, st_tileenvelope(${z}, ${x}, ${y}), 4096, 64) as geom
    ) q where q.geom is not null)`;
  const tile = await pool.oneFirst(sql.unsafe`select
    ${layer('earth', sql.fragment`'earth' as kind`, sql.fragment`st_tileenvelope(${z}, ${x}, ${y})`)} ||
    ${layer('water', sql.fragment`'lake' as kind, 'Testsee' as name`, sql.fragment`st_buffer(${point(CENTRE.lng + 0.06, CENTRE.lat + 0.03)}, 2500)`)} ||
    ${layer(
      'roads',
      sql.fragment`'major_road' as kind, 'Test Avenue' as name, 5 as min_zoom`,
      sql.fragment`st_makeline(${point(CENTRE.lng - 0.3, CENTRE.lat - 0.02)}, ${point(CENTRE.lng + 0.3, CENTRE.lat + 0.01)})`,
    )} ||
    ${layer(
      'places',
      sql.fragment`'locality' as kind, 'Testville' as name, 'Testville' as "name:en", 2 as min_zoom, 15 as population_rank`,
      point(CENTRE.lng, CENTRE.lat - 0.05),
    )}`);
  return new Uint8Array(tile as Buffer);
}

/** The tiles around the centre at zooms 0 to 10, as a PMTiles file in a folder removed afterwards. */
async function testArchive(t: Test, pool: DatabasePool): Promise<string> {
  const tiles: PmtilesTile[] = [];
  for (let z = 0; z <= 10; z += 1) {
    const n = 2 ** z;
    const cx = Math.floor(((CENTRE.lng + 180) / 360) * n);
    const latRad = (CENTRE.lat * Math.PI) / 180;
    const cy = Math.floor(((1 - Math.asinh(Math.tan(latRad)) / Math.PI) / 2) * n);
    for (let x = Math.max(0, cx - 1); x <= Math.min(n - 1, cx + 1); x += 1) {
      for (let y = Math.max(0, cy - 1); y <= Math.min(n - 1, cy + 1); y += 1) {
        tiles.push({ z, x, y, data: await protomapsTile(pool, z, x, y) });
      }
    }
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basemap-browser-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'region.pmtiles');
  const vectorLayers = ['earth', 'water', 'roads', 'places'].map((id) => ({ id, fields: {} }));
  writeFileSync(
    file,
    writePmtiles(tiles, {
      tileType: 'mvt',
      tileCompression: 'none',
      metadata: { name: 'test region', vector_layers: vectorLayers },
      center: [CENTRE.lng, CENTRE.lat, 9],
    }),
  );
  return file;
}

/** Poll an expression in the page (its Content-Security-Policy forbids page.waitForFunction's eval). */
async function waitFor(page: Page, expression: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The ids of the layers drawn in view (from one source when given), each once. */
const DRAWN_LAYERS = (source: string) =>
  `[...new Set(window.explore.map.queryRenderedFeatures().filter((f) => ${JSON.stringify(source)} === '' || f.source === ${JSON.stringify(source)}).map((f) => f.layer.id))]`;

type Visit = {
  page: Page;
  requests: string[];
  problems: string[];
  ranges: Array<{ range: string; status: number }>;
};

async function visit(browser: Browser, url: string): Promise<Visit> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const visit: Visit = { page, requests: [], problems: [], ranges: [] };
  page.on('request', (request) => visit.requests.push(request.url()));
  page.on('pageerror', (error) => visit.problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') visit.problems.push(`console: ${message.text()}`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) visit.problems.push(`${response.status()} ${response.url()}`);
    if (!response.url().endsWith('/basemap/basemap.pmtiles')) return;
    void response
      .request()
      .headerValue('range')
      .then((range) => visit.ranges.push({ range: range ?? '', status: response.status() }));
  });
  await page.goto(url);
  await waitFor(page, `Boolean(window.explore?.map) && document.body.hasAttribute('data-map-idle')`).catch(
    (error: Error) => {
      throw new Error(`${error.message}; problems: ${visit.problems.join('; ')}`);
    },
  );
  return visit;
}

/** Every request the page made went to the service (or stayed in the page: data: and blob: URLs). */
function stayedOnService(t: Test, requests: string[], base: string): void {
  const elsewhere = requests.filter((url) => !url.startsWith(`${base}/`) && !/^(data|blob):/.test(url));
  t.same(elsewhere, [], `all ${requests.length} requests went to the service`);
}

t.test('a PMTiles basemap drawn under the events, every request on the service', async (t) => {
  const db = await testDatabase(t);
  const archive = await testArchive(t, db.pool);
  const config = testConfig({
    quotasFile: policyFile(t, unlimitedAnonymousReads),
    mapBasemapPmtiles: archive,
  });
  const services = await composeServices(config, db.url, { http: true, workers: false });
  t.teardown(() => services.close());
  const app = services.http!;
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t, { webgl: true });

  const { page, requests, problems, ranges } = await visit(
    browser,
    `${base}/?lng=13.4&lat=52.5&zoom=9.5&mode=markers`,
  );
  // The town's name appears once its glyphs have come: symbols are placed after the tiles are drawn.
  await waitFor(page, `${DRAWN_LAYERS('protomaps')}.includes('places_locality')`);
  const drawn = await page.evaluate<string[]>(DRAWN_LAYERS('protomaps'));
  for (const layer of ['earth', 'water', 'roads_major', 'places_locality'])
    t.ok(drawn.includes(layer), `${layer} drawn`);
  const labels = await page.evaluate<string[]>(
    `window.explore.map.queryRenderedFeatures({ layers: ['places_locality'] }).map((f) => f.properties.name)`,
  );
  t.ok(labels.includes('Testville'), 'the town named');

  t.ok(ranges.length >= 2, `${ranges.length} reads of the archive: its header and directory, then tiles`);
  t.ok(
    ranges.every(({ range, status }) => /^bytes=\d+-\d+$/.test(range) && status === 206),
    'each a Range request answered 206',
  );
  t.ok(
    requests.some((url) => url.includes('/basemap/glyphs/DejaVu%20Sans%20Book/0-255.pbf')),
    'glyphs from the service',
  );
  t.ok(
    requests.some((url) => /\/assets\/pmtiles-[\d.]+\/pmtiles\.js$/.test(url)),
    'the pmtiles reader from the service',
  );
  stayedOnService(t, requests, base);
  t.same(problems, [], 'no errors in the page');
  keepScreenshot(t, await page.screenshot(), 'basemap');
});

t.test('without an archive, the default map names towns as well as drawing countries', async (t) => {
  const { app } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t, { webgl: true });
  const { page, requests, problems } = await visit(browser, `${base}/?lng=13.4&lat=52.5&zoom=7&mode=markers`);
  await waitFor(page, `${DRAWN_LAYERS('places')}.length > 0`);
  const names = await page.evaluate<string[]>(
    `window.explore.map.queryRenderedFeatures().filter((f) => f.source === 'places').map((f) => f.properties.name)`,
  );
  t.ok(names.includes('Berlin'), `Berlin among the ${names.length} towns named`);
  t.ok(names.includes('Potsdam'), 'and Potsdam');
  t.notOk(
    requests.some((url) => url.includes('/basemap/basemap.pmtiles')),
    'no archive asked for',
  );
  stayedOnService(t, requests, base);
  t.same(problems, [], 'no errors in the page');
  keepScreenshot(t, await page.screenshot(), 'basemap-default');
});
