import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Test } from 'tap';
import { projectRoot } from '../../src/adapters/config/environment.ts';

// Browser tests run Debian's Chromium through playwright-core. With CHRONOMAP_SCREENSHOTS=1 a run
// also refreshes docs/screenshots/.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SAVE = process.env.CHRONOMAP_SCREENSHOTS === '1';
const SHOTS = path.join(projectRoot, 'docs', 'screenshots');

/** Headless Chromium, closed when the test ends. */
export async function launchChromium(t: Test): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

/** Takes a full-page PNG of `page` (checked), saved as docs/screenshots/{name}.png when asked to. */
export function screenshots(t: Test, page: Page): (name: string) => Promise<void> {
  return async (name) => {
    const image = await page.screenshot({ fullPage: true });
    t.equal(image.subarray(1, 4).toString(), 'PNG', `screenshot ${name}`);
    if (SAVE) {
      mkdirSync(SHOTS, { recursive: true });
      writeFileSync(path.join(SHOTS, `${name}.png`), image);
    }
  };
}
