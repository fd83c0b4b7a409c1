import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { keepScreenshot, launchChromium } from '../helpers/browser.ts';
import { policyFile, unlimitedAnonymousReads } from '../helpers/accounts.ts';
import { sql } from '../../src/adapters/postgres/database.ts';
import { testApp } from '../helpers/app.ts';
import { type ExpectedFilter, expectedEvents, loadReadFixture, SAME_SPOT } from '../helpers/v1-fixture.ts';

// The Explore page at / in a real browser (Debian's Chromium, WebGL through SwiftShader) against the
// whole service on loopback with the read-API fixture: three datasets in two catalogs, events around
// the globe. With CHRONOMAP_SCREENSHOTS=1 the run also refreshes docs/screenshots/explore*.png.

// Code run in the page is written as strings: this project's TypeScript has no DOM types.
const GENERATION = 'Number(document.body.dataset.generation ?? 0)';

/** Run an action, then wait until the page has finished the refresh it caused and the map is idle. */
async function settled(page: Page, action: () => Promise<unknown>, navigates = false): Promise<void> {
  // A new document starts counting from 0.
  const before = navigates ? 0 : await page.evaluate<number>(GENERATION);
  await action();
  await waitFor(
    page,
    `${GENERATION} > ${before} && !document.body.hasAttribute('data-loading') && document.body.hasAttribute('data-map-idle')`,
  );
}

/**
 * Poll an expression until it is true. (page.waitForFunction evaluates strings with eval, which the
 * page's Content-Security-Policy rightly forbids; page.evaluate goes through the debugger protocol.)
 */
async function waitFor(page: Page, expression: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await page.evaluate<boolean>(expression))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${expression}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The markers on the map: how many, and their counts added up. */
async function mapCounts(page: Page): Promise<{ markers: number; total: number }> {
  return page.evaluate<{ markers: number; total: number }>(`(() => {
    const counts = [...document.querySelectorAll('#map [data-count]')].map((node) => Number(node.dataset.count));
    return { markers: counts.length, total: counts.reduce((sum, count) => sum + count, 0) };
  })()`);
}

/** The histogram's bars added up. */
async function histogramTotal(page: Page): Promise<number> {
  return page.evaluate<number>(
    `[...document.querySelectorAll('#timeline rect.bar')].reduce((sum, bar) => sum + Number(bar.dataset.count), 0)`,
  );
}

type Bounds = { north: number; south: number; east: number; west: number };

/** What the page shows now: the URL's state, the markers, the histogram, the list. */
async function snapshot(page: Page) {
  const { markers, total } = await mapCounts(page);
  const url = new URL(page.url());
  return {
    markers,
    total,
    histogram: await histogramTotal(page),
    summary: (await page.textContent('#summary')) ?? '',
    pageInfo: (await page.textContent('#page-info')) ?? '',
    firstListed: (await page.textContent('#event-list li:first-child')) ?? '',
    params: url.searchParams,
    bounds: JSON.parse(await page.evaluate<string>('JSON.stringify(window.explore.status.bounds)')) as Bounds,
    zoom: await page.evaluate<number>('window.explore.map.getZoom()'),
  };
}

const countIn = (summary: string) => Number(/([\d,]+) events/.exec(summary)?.[1]?.replaceAll(',', '') ?? NaN);

t.test('the Explore page in Chromium', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  // Every event near Berlin was located by the geocoder (issue 20): its details say so.
  await db.pool.query(sql.unsafe`
    update events set located_by = jsonb_build_object(
      'method', 'geocoded', 'address', 'Berlin, Germany', 'provider', 'offline-geonames',
      'matchedName', 'Berlin', 'matchedRegion', 'Berlin', 'matchedCountry', 'DE', 'confidence', 0.95)
    where st_dwithin(location, st_setsrid(st_makepoint(13.4, 52.5), 4326), 2)`);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  t.test('/ answers HTML to browsers and the JSON index to JSON clients', async (t) => {
    const json = await fetch(`${base}/`, { headers: { accept: 'application/json' } });
    t.equal(json.status, 200);
    t.match(await json.json(), { name: 'chronomap', openapi: '/api/openapi.json', explore: '/' });
    const page = await fetch(`${base}/`, { headers: { accept: 'text/html,*/*' } });
    t.match(page.headers.get('content-type'), /text\/html/);
    t.match(page.headers.get('content-security-policy'), /script-src 'self'/);
    const body = await page.text();
    const maplibre = /href="(\/assets\/maplibre-gl-[^"]+\/maplibre-gl\.mjs)"/.exec(body)?.[1];
    t.ok(maplibre, 'the page names the versioned MapLibre build');
    const asset = await fetch(`${base}${maplibre}`);
    t.equal(asset.status, 200);
    t.match(asset.headers.get('cache-control'), /immutable/);
    t.match(asset.headers.get('content-type'), /javascript/);
    const again = await fetch(`${base}${maplibre}`, {
      headers: { 'if-none-match': asset.headers.get('etag') ?? '' },
    });
    t.equal(again.status, 304, 'revalidates by ETag');
    const countries = (await (await fetch(`${base}/explore/countries.geojson`)).json()) as {
      type: string;
      features: unknown[];
    };
    t.equal(countries.type, 'FeatureCollection');
    t.ok(countries.features.length > 150, 'Natural Earth countries');
  });

  const browser = await launchChromium(t, { webgl: true });

  const open = async (viewport: { width: number; height: number }, phone = false) => {
    const context = await browser.newContext({
      viewport,
      ...(phone ? { isMobile: true, hasTouch: true } : {}),
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('response', (response) => {
      // The body's error code says which failure it was (a 503 is QUERY_TIMEOUT or DATABASE_UNAVAILABLE).
      if (response.status() < 400) return;
      const problem = `${response.status()} ${response.url()}`;
      void response.text().then(
        (body) => problems.push(`${problem} ${body.slice(0, 200)}`),
        () => problems.push(problem),
      );
    });
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    return { page, problems };
  };
  const shot = async (page: Page, name: string) => keepScreenshot(t, await page.screenshot(), name);
  /** Every count on the page agrees with the fixture for the bounds and filters in force. */
  const agrees = async (t: Test, page: Page, expected: ExpectedFilter, what: string) => {
    const now = await snapshot(page);
    const want = expectedEvents(fixture, { ...expected, bounds: now.bounds }).length;
    t.equal(now.total, want, `${what}: the clusters count the matching events in view`);
    t.equal(countIn(now.summary), want, `${what}: the list counts them too`);
    return now;
  };

  const { page, problems } = await open({ width: 1280, height: 800 });
  let shared = '';

  t.test('first view: clusters add up to the histogram', async (t) => {
    await settled(page, () => page.goto(`${base}/?mode=markers`), true);
    t.equal(await page.title(), 'Explore · Chronomap');
    t.ok(await page.isVisible('#map canvas.maplibregl-canvas'), 'MapLibre drew its canvas');
    const first = await agrees(t, page, {}, 'first view');
    t.ok(first.markers > 3, `clusters on the map (${first.markers})`);
    t.equal(first.total, first.histogram, 'cluster counts add up to the histogram total');
    t.equal(await page.locator('#datasets input[type=checkbox]').count(), 3, 'one checkbox per dataset');
    await shot(page, 'explore');
  });

  t.test('the list pages through the events in view', async (t) => {
    const before = await snapshot(page);
    t.match(before.pageInfo, /^Page 1 of \d+/);
    t.ok(await page.isDisabled('#prev-page'));
    await settled(page, () => page.click('#next-page'));
    const after = await snapshot(page);
    t.match(after.pageInfo, /^Page 2 of/);
    t.equal(after.params.get('page'), '2', 'the page is in the URL');
    t.not(after.firstListed, before.firstListed, 'another page of events');
    t.equal(await page.locator('#event-list li').count(), 20);
    await settled(page, () => page.click('#prev-page'));
    t.equal((await snapshot(page)).firstListed, before.firstListed, 'back to the first page');
  });

  t.test('clicking a cluster zooms in', async (t) => {
    const before = await snapshot(page);
    const biggest = page.locator('#map button.cluster.size-5').first();
    await settled(page, () => biggest.click());
    const after = await agrees(t, page, {}, 'zoomed');
    t.ok(after.zoom > before.zoom + 1.5, `zoomed from ${before.zoom} to ${after.zoom}`);
    t.equal(after.total, after.histogram, 'still adds up to the histogram');
    t.ok(Number(after.params.get('zoom')) > before.zoom, 'the zoom is in the URL');
  });

  t.test('filter by dataset', async (t) => {
    const before = await snapshot(page);
    await settled(page, () => page.check('#dataset-fires'));
    const after = await agrees(t, page, { datasets: ['fires'] }, 'fires only');
    t.equal(after.params.get('datasets'), 'fires');
    t.ok(after.total < before.total && after.total > 0, `fewer events (${after.total} of ${before.total})`);
    t.equal(after.total, after.histogram);
  });

  t.test('brushing the timeline sets the dates', async (t) => {
    const box = await page.locator('#timeline svg').boundingBox();
    if (!box) throw new Error('no histogram');
    const y = box.y + box.height / 2;
    await settled(page, async () => {
      await page.mouse.move(box.x + box.width * 0.3, y);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.5, y, { steps: 5 });
      await page.mouse.move(box.x + box.width * 0.7, y, { steps: 5 });
      await page.mouse.up();
    });
    const now = await snapshot(page);
    const startDate = now.params.get('startDate') ?? '';
    const endDate = now.params.get('endDate') ?? '';
    t.ok(startDate && endDate && startDate < endDate, `a range in the URL: ${startDate} to ${endDate}`);
    const to = new Date(Date.parse(endDate) + 1).toISOString();
    const brushed = await agrees(t, page, { datasets: ['fires'], from: startDate, to }, 'brushed');
    t.ok(brushed.total < brushed.histogram, 'the map shows part of the timeline');
    t.equal(await page.inputValue('#start-date'), startDate.slice(0, 10), 'the date fields follow');
    t.ok((await page.locator('#timeline rect.bar.outside').count()) > 0, 'bars outside the range are dimmed');
    await shot(page, 'explore-filtered');
    shared = page.url();
  });

  t.test('reloading a shared link restores the view', async (t) => {
    const before = await snapshot(page);
    const other = await open({ width: 1280, height: 800 });
    await settled(other.page, () => other.page.goto(shared), true);
    const after = await snapshot(other.page);
    t.ok(Math.abs(after.zoom - before.zoom) < 0.01, 'same zoom');
    for (const side of ['north', 'south', 'east', 'west'] as const) {
      // The URL keeps the centre to 4 decimals (about 10 m).
      t.ok(Math.abs(after.bounds[side] - before.bounds[side]) < 0.01, `same ${side} edge`);
    }
    t.equal(after.total, before.total, 'same clusters');
    t.equal(after.summary, before.summary);
    t.ok(await other.page.isChecked('#dataset-fires'), 'same dataset ticked');
    t.equal(await other.page.inputValue('#end-date'), await page.inputValue('#end-date'), 'same dates');
    t.same(other.problems, []);
    await other.page.context().close();
  });

  t.test('filter by catalog', async (t) => {
    await settled(page, () => page.click('#clear-dates'));
    await settled(page, () => page.selectOption('#catalog', 'science'));
    const science = await agrees(t, page, { catalog: 'science' }, 'science');
    t.equal(science.params.get('catalog'), 'science');
    t.equal(science.params.get('datasets'), null, 'a dataset of another catalog is dropped');
    t.equal(await page.locator('#datasets input[type=checkbox]').count(), 1, "only the catalog's datasets");
    // The download links carry the view's filters and box, and what they give is the list's events.
    const csvHref = (await page.getAttribute('#download-csv', 'href')) ?? '';
    const csvUrl = new URL(csvHref, base);
    t.equal(csvUrl.pathname, '/api/v1/events.csv');
    t.equal(csvUrl.searchParams.get('catalog'), 'science', 'the CSV link carries the catalog filter');
    t.ok(csvUrl.searchParams.get('bounds'), 'and the box in view');
    const download = await page.request.get(csvUrl.toString());
    t.equal(download.status(), 200);
    const lines = (await download.text()).trimEnd().split('\r\n');
    t.match(lines[0], /^id,title,eventTimestamp,dataset,catalog,/);
    t.equal(lines.length - 1, countIn(science.summary), 'the CSV holds the events the list counts');
    t.equal(
      new URL((await page.getAttribute('#download-geojson', 'href')) ?? '', base).search,
      csvUrl.search,
      'the GeoJSON link the same filters',
    );
    await settled(page, () => page.selectOption('#catalog', ''));
    t.equal(new URL(page.url()).searchParams.get('catalog'), null);
  });

  t.test('the keyboard reaches the controls and opens a cluster', async (t) => {
    await page.focus('body');
    const reached = new Set<string>();
    // Enough presses to go round the whole page once: sixteen download links sit after the list.
    for (let i = 0; i < 100; i++) {
      await page.keyboard.press('Tab');
      reached.add(
        await page.evaluate<string>(
          `(() => { const e = document.activeElement; return e.id || e.className || e.tagName; })()`,
        ),
      );
    }
    for (const control of ['catalog', 'dataset-fires', 'start-date', 'end-date', 'clear-dates']) {
      t.ok(reached.has(control), `Tab reaches #${control}`);
    }
    t.ok(
      [...reached].some((name) => name.includes('maplibregl-canvas')),
      'Tab reaches the map',
    );
    t.ok(
      [...reached].some((name) => name.includes('cluster')),
      'Tab reaches the clusters',
    );
    t.ok(
      [...reached].some((name) => name.includes('zoom-in')),
      'Tab reaches the zoom buttons',
    );
    const before = await snapshot(page);
    await page.locator('#map button.cluster').first().focus();
    await settled(page, () => page.keyboard.press('Enter'));
    t.ok((await snapshot(page)).zoom > before.zoom, 'Enter on a cluster zooms in');
  });

  t.test('a point shows its event, a spot lists its events', async (t) => {
    await settled(page, () => page.goto(`${base}/?lng=13.4&lat=52.5&zoom=8&mode=markers`), true);
    const point = page.locator('#map button.point').first();
    await point.click();
    await page.locator('#detail:not([hidden])').waitFor();
    t.match(await page.textContent('#detail'), /Dataset\s*(Fires|Protests|Exhibitions)/);
    t.match(await page.textContent('#detail'), /mag/);
    t.match(
      await page.textContent('#detail'),
      /Located by\s*geocoded from “Berlin, Germany” as Berlin, Berlin, DE \(offline-geonames, confidence 0\.95\)/,
    );
    t.match(await page.textContent('#detail'), /Stored\s*\S/, 'when the event was stored (provenance)');
    t.match(
      await page.locator('#detail a', { hasText: 'Where this event came from' }).getAttribute('href'),
      /^\/events\/\d+\/provenance$/,
      'the details link to the provenance page',
    );
    await shot(page, 'explore-detail');
    await page.keyboard.press('Escape');
    t.ok(await page.isHidden('#detail'), 'Escape closes the details');
    await settled(
      page,
      () => page.goto(`${base}/?lng=${SAME_SPOT.longitude}&lat=${SAME_SPOT.latitude}&zoom=17&mode=markers`),
      true,
    );
    await page.locator('#map button.cluster').first().click();
    await page.locator('#detail:not([hidden])').waitFor();
    t.equal(await page.textContent('#detail-title'), '6 events at this spot');
    t.equal(await page.locator('#detail .spot li').count(), 6);
  });

  t.test('a phone-sized screen', async (t) => {
    const phone = await open({ width: 390, height: 844 }, true);
    await settled(phone.page, () => phone.page.goto(`${base}/?mode=markers`), true);
    const map = await phone.page.locator('#map').boundingBox();
    t.ok(map && map.width >= 380 && map.height > 300, 'the map takes the width of the screen');
    const now = await snapshot(phone.page);
    t.ok(now.markers > 0);
    t.equal(now.total, now.histogram, 'clusters add up to the histogram');
    t.notOk(await phone.page.locator('#filters-box').getAttribute('open'), 'filters folded away');
    const scrollWidth = await phone.page.evaluate<number>('document.documentElement.scrollWidth');
    t.ok(scrollWidth <= 390, `no sideways scrolling (${scrollWidth})`);
    keepScreenshot(t, await phone.page.screenshot({ fullPage: true }), 'explore-phone');
    t.same(phone.problems, []);
  });

  t.test('vector-tile mode: MapLibre reads the TileJSON and the tiles itself', async (t) => {
    // At map zoom 0 to 1 MapLibre reads one tile, 0/0/0: the world, every located event once.
    const wide = await open({ width: 1280, height: 800 });
    const tiles: Array<{ status: number; type: string | null }> = [];
    wide.page.on('response', (response) => {
      if (/\/api\/v1\/tiles\/\d+\/\d+\/\d+\.mvt/.test(response.url()))
        tiles.push({ status: response.status(), type: response.headers()['content-type'] ?? null });
    });
    await settled(wide.page, () => wide.page.goto(`${base}/?lng=0&lat=0&zoom=0&mode=tiles`), true).catch(
      (error: Error) => {
        throw new Error(`${error.message}; problems: ${wide.problems.join('; ')}`);
      },
    );
    t.equal(await wide.page.inputValue('#map-mode'), 'tiles', 'the mode is read from the URL');
    t.equal(await wide.page.locator('#map [data-count]').count(), 0, 'no HTML markers');
    t.ok(tiles.length > 0, `${tiles.length} tiles fetched`);
    t.ok(
      tiles.every((tile) => [200, 204].includes(tile.status)),
      'every tile answered 200 or 204',
    );
    t.ok(tiles.some((tile) => tile.type === 'application/vnd.mapbox-vector-tile'));
    const located = fixture.events.filter((event) => event.longitude !== null).length;
    const world = await wide.page.evaluate<{ clusters: number; clusterTotal: number }>(
      '({ clusters: window.explore.status.clusters, clusterTotal: window.explore.status.clusterTotal })',
    );
    t.ok(world.clusters > 3, `${world.clusters} features drawn from the tiles`);
    t.equal(world.clusterTotal, located, 'the world tile counts every located event once');
    keepScreenshot(t, await wide.page.screenshot(), 'explore-tiles');

    // Clicking a cluster drawn from a tile zooms in, as a marker does.
    const target = await wide.page.evaluate<{ x: number; y: number }>(`(() => {
      const map = window.explore.map;
      const feature = map.queryRenderedFeatures({ layers: ['event-tiles-clusters'] })
        .sort((a, b) => b.properties.count - a.properties.count)[0];
      const point = map.project(feature.geometry.coordinates);
      const box = document.getElementById('map').getBoundingClientRect();
      return { x: box.left + point.x, y: box.top + point.y };
    })()`);
    const before = await wide.page.evaluate<number>('window.explore.map.getZoom()');
    await settled(wide.page, () => wide.page.mouse.click(target.x, target.y));
    const after = await wide.page.evaluate<number>('window.explore.map.getZoom()');
    t.ok(after > before + 1.5, `zoomed from ${before} to ${after}`);
    t.equal(new URL(wide.page.url()).searchParams.get('mode'), 'tiles', 'the mode stays in the URL');

    // Back to markers: the tile layers go, the markers come.
    await settled(wide.page, () => wide.page.selectOption('#map-mode', 'markers'));
    t.ok((await mapCounts(wide.page)).markers > 0, 'markers drawn again');
    t.notOk(
      await wide.page.evaluate<boolean>("Boolean(window.explore.map.getSource('event-tiles'))"),
      'the tile source is removed',
    );
    t.same(wide.problems, []);
  });

  t.test(
    'automatic mode, the default: vector tiles with count labels, markers once the keyboard is used',
    async (t) => {
      const auto = await open({ width: 1280, height: 800 });
      await settled(auto.page, () => auto.page.goto(`${base}/?lng=0&lat=0&zoom=0`), true);
      t.equal(await auto.page.inputValue('#map-mode'), 'auto', 'no mode in the URL is automatic');
      t.equal(await auto.page.getAttribute('#map', 'data-drawing'), 'tiles', 'drawn from vector tiles');
      t.equal(await auto.page.locator('#map [data-count]').count(), 0, 'no HTML markers');
      const located = fixture.events.filter((event) => event.longitude !== null).length;
      t.equal(
        await auto.page.evaluate<number>('window.explore.status.clusterTotal'),
        located,
        'the world tile counts every located event once',
      );
      // Each cluster drawn has its count drawn on it, from a label image the page made (no glyph server).
      const labels = await auto.page.evaluate<{
        clusters: string[];
        labels: string[];
        images: string[];
      }>(`(() => {
      const map = window.explore.map;
      const ids = (layer) => map.queryRenderedFeatures({ layers: [layer] }).map((f) => 'count:' + f.properties.count).sort();
      return {
        clusters: ids('event-tiles-clusters'),
        labels: ids('event-tiles-labels'),
        images: map.listImages().filter((id) => id.startsWith('count:')),
      };
    })()`);
      t.ok(labels.clusters.length > 3, `${labels.clusters.length} clusters drawn`);
      t.same(labels.labels, labels.clusters, 'each with its label drawn');
      t.same(
        labels.clusters.filter((id) => !labels.images.includes(id)),
        [],
        'from a label image of its count',
      );
      keepScreenshot(t, await auto.page.screenshot(), 'explore-auto');

      // The keyboard: Tab switches the drawing to markers, which Tab then reaches.
      await settled(auto.page, () => auto.page.keyboard.press('Tab'));
      t.equal(await auto.page.getAttribute('#map', 'data-drawing'), 'markers', 'markers once Tab is pressed');
      t.ok((await mapCounts(auto.page)).markers > 3, 'HTML markers drawn');
      t.notOk(
        await auto.page.evaluate<boolean>("Boolean(window.explore.map.getSource('event-tiles'))"),
        'the tile source is removed',
      );
      t.equal(new URL(auto.page.url()).searchParams.get('mode'), null, 'still automatic: nothing in the URL');
      t.same(auto.problems, []);
    },
  );

  t.test('no errors in the page', async (t) => {
    t.same(problems, []);
  });
});
