import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import type { Config } from '../../src/adapters/config/environment.ts';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../fixtures/ingest/client.ts';
import { launchChromium, screenshots } from './browser.ts';

// The set-up the account pages' browser tests share (saved views, subscriptions): the service with
// two Japanese events imported through the real ingest pipeline, listening on loopback, Chromium
// with WebGL, and the user signed in through the login form on the page under test.

const CSV =
  'time,latitude,longitude,title\n2026-01-01T00:00:00Z,35.68,139.69,Tokyo\n2026-01-02T00:00:00Z,34.69,135.50,Osaka\n';

/** The Explore page on Japan in January, where the two events are. */
export const JAPAN_IN_JANUARY = '/?lng=137.5&lat=35.5&zoom=4.5&startDate=2026-01-01&endDate=2026-01-31';

export async function signedInOverJapan(
  t: Test,
  options: { path: string; viewport: { width: number; height: number }; ingest?: Partial<Config['ingest']> },
) {
  const { app, db, catalogId, user } = await ingestApp(t, options.ingest);
  const doc = (
    (await upload(app, catalogId, { name: 'japan.csv', content: CSV })).json() as { doc: UploadedDoc }
  ).doc;
  t.equal((await waitForFile(app, doc.id)).status, 'completed', 'the events are imported');
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t, { webgl: true });
  const page = await (await browser.newContext({ viewport: options.viewport })).newPage();
  const shot = screenshots(t, page);

  await page.goto(`${base}${options.path}`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  t.equal(new URL(page.url()).pathname, options.path, 'the login comes back to the page');
  return { app, db, catalogId, user, base, browser, page, shot };
}
