import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { projectRoot } from '../../src/adapters/config/environment.ts';

// Browser tests (and bench/explore) run Debian's Chromium through playwright-core, headless and
// without the network chatter of a first run, which this offline machine refuses. With
// CHRONOMAP_SCREENSHOTS=1 a test run also refreshes docs/screenshots/.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SAVE = process.env.CHRONOMAP_SCREENSHOTS === '1';
const SHOTS = path.join(projectRoot, 'docs', 'screenshots');

const QUIET = [
  '--headless',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
/** The map needs WebGL and this machine has no GPU: SwiftShader draws it on the CPU. */
const WEBGL_ON_CPU = ['--use-angle=swiftshader', '--enable-unsafe-swiftshader'];

/** Headless Chromium; `webgl` for pages that draw a map. The caller closes it. */
export function openChromium(options: { webgl?: boolean } = {}): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [...QUIET, ...(options.webgl ? WEBGL_ON_CPU : ['--disable-gpu'])],
  });
}

/** Headless Chromium, closed when the test ends. */
export async function launchChromium(t: Test, options: { webgl?: boolean } = {}): Promise<Browser> {
  const browser = await openChromium(options);
  t.teardown(async () => {
    // A failed browser test says where its pages were (a wait that timed out says only what it
    // waited for): each page's address and the start of its text, on stderr.
    if (!t.passing())
      for (const page of browser.contexts().flatMap((c) => c.pages())) {
        const text = await page.innerText('body', { timeout: 2000 }).catch(() => '(unreadable)');
        process.stderr.write(`page at failure: ${page.url()}\n${text.slice(0, 500)}\n`);
      }
    await browser.close();
  });
  return browser;
}

/** Checks that `image` is a PNG and saves it as docs/screenshots/{name}.png when asked to. */
export function keepScreenshot(t: Test, image: Buffer, name: string): void {
  t.equal(image.subarray(1, 4).toString(), 'PNG', `screenshot ${name}`);
  if (SAVE) {
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(path.join(SHOTS, `${name}.png`), image);
  }
}

/** Takes a full-page PNG of `page` (checked), saved as docs/screenshots/{name}.png when asked to. */
export function screenshots(t: Test, page: Page): (name: string) => Promise<void> {
  return async (name) => keepScreenshot(t, await page.screenshot({ fullPage: true }), name);
}
