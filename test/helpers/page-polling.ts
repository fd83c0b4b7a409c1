import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';

// Server-rendered pages show a record's actions as they were when the page was rendered: a browser
// test reloads until what it waits for is there. (page.waitForFunction evaluates with eval, which
// the pages' Content-Security-Policy refuses.)

export async function reloadUntil(page: Page, selector: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await page.locator(selector).count()) === 0) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${selector}`);
    await sleep(300);
    await page.reload();
  }
}
