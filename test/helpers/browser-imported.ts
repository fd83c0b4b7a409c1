import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import type { Test } from 'tap';
import type { Config } from '../../src/adapters/config/environment.ts';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../fixtures/ingest/client.ts';
import { launchChromium } from './browser.ts';

/**
 * A served app with one completed import of `csv`, and Debian's Chromium logged in as its owner on
 * My imports (downloads accepted): the start of the browser tests about a user's own data.
 */
export async function importedSession(
  t: Test,
  file: { name: string; content: string },
  config: Partial<Config> = {},
): Promise<{ base: string; page: Page; user: { email: string; password: string } }> {
  const { app, catalogId, user } = await ingestApp(t, {}, true, config);
  const doc = ((await upload(app, catalogId, file)).json() as { doc: UploadedDoc }).doc;
  const finished = await waitForFile(app, doc.id);
  if (finished.status !== 'completed') throw new Error(`the import ended ${finished.status}`);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  await page.goto(`${base}/account/imports`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  return { base, page, user };
}
