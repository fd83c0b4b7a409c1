import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import t from 'tap';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { policyFile, unlimitedAnonymousReads } from '../helpers/accounts.ts';
import { testApp } from '../helpers/app.ts';
import { expectedEvents, loadReadFixture } from '../helpers/v1-fixture.ts';

// The Explore page at / in a real browser (Debian's Chromium, WebGL through SwiftShader) against the
// whole service on loopback with the read-API fixture: three datasets in two catalogs, events around
// the globe. With CHRONOMAP_SCREENSHOTS=1 the run also refreshes docs/screenshots/explore*.png.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SAVE = process.env.CHRONOMAP_SCREENSHOTS === '1';
const SHOTS = path.join(projectRoot, 'docs', 'screenshots');

/** Chromium flags: headless, and WebGL on the CPU (SwiftShader) since there is no GPU. */
export const EXPLORE_BROWSER_ARGS = [
  '--headless',
  '--no-sandbox',
  '--use-angle=swiftshader',
  '--enable-unsafe-swiftshader',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

// Code run in the page is written as strings: this project's TypeScript has no DOM types.
const GENERATION = 'Number(document.body.dataset.generation ?? 0)';

/** Run an action, then wait until the page has finished the refresh it caused and the map is idle. */
async function settled(page: Page, action: () => Promise<unknown>): Promise<void> {
  const before = await page.evaluate<number>(GENERATION);
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

t.test('the Explore page in Chromium', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: EXPLORE_BROWSER_ARGS });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console: ${message.text()}`);
  });
  const shot = async (name: string) => {
    const image = await page.screenshot();
    t.equal(image.subarray(1, 4).toString(), 'PNG', `screenshot ${name}`);
    if (SAVE) {
      mkdirSync(SHOTS, { recursive: true });
      writeFileSync(path.join(SHOTS, `${name}.png`), image);
    }
  };

  await settled(page, () => page.goto(`${base}/`));
  t.equal(await page.title(), 'Explore · Chronomap');
  t.ok(await page.isVisible('#map canvas.maplibregl-canvas'), 'MapLibre drew its canvas');
  const first = await mapCounts(page);
  t.ok(first.markers > 3, `clusters on the map (${first.markers})`);
  t.equal(first.total, await histogramTotal(page), 'cluster counts add up to the histogram total');
  await shot('explore');
  t.same(problems, [], 'no errors in the page');
});
