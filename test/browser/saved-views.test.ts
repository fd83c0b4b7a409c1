import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { screenshots } from '../helpers/browser.ts';
import { JAPAN_IN_JANUARY, signedInOverJapan } from '../helpers/japan-in-chromium.ts';

// Saved views and embeds in Debian's Chromium (issue 38 §1–2, §6): a user saves the Explore page's
// view, makes it public on /account/views and allows one site to embed it; a page of that site
// frames the embed (map and timeline, no chrome) and a page of another origin is refused by the
// browser itself (Content-Security-Policy frame-ancestors). With CHRONOMAP_SCREENSHOTS=1 the run
// refreshes docs/screenshots/saved-views.png and embed.png.

/** A web site of someone else's: one page that frames `embed`, at http://{host}:{port}/. */
async function framingSite(t: Test, embed: () => string) {
  const server = createServer((_request, response) => {
    response.setHeader('content-type', 'text/html; charset=utf-8');
    response.end(
      `<!doctype html><title>News</title><h1>Our story</h1>` +
        `<iframe id="chronomap" src="${embed()}" width="900" height="560" style="border:0"></iframe>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

t.test('save a view, allow a site, and embed it there (and nowhere else)', async (t) => {
  const { base, browser, page, shot } = await signedInOverJapan(t, {
    path: '/account/views',
    viewport: { width: 1280, height: 860 },
  });
  t.match(await page.textContent('main'), /No saved views yet/);

  // The Explore page on Japan, saved with "Save this view".
  await page.goto(`${base}${JAPAN_IN_JANUARY}`);
  await page.click('#save-view summary');
  await page.fill('#view-title', 'Japan, January');
  await page.click('#save-view-form button[type=submit]');
  await page.waitForSelector('#save-view-result a');
  const link = (await page.getAttribute('#save-view-result a', 'href')) as string;
  t.match(link, /\/v\/[A-Za-z0-9]{10}$/, 'the saved view has a short link');
  const code = link.slice(-10);

  // The short link brings the Explore page back to the same view.
  await page.goto(link);
  const opened = new URL(page.url());
  t.equal(opened.pathname, '/');
  t.equal(opened.searchParams.get('startDate'), '2026-01-01');
  t.equal(Number(opened.searchParams.get('lng')).toFixed(1), '137.5');

  const allowedPort = await framingSite(t, () => `${base}/embed/${code}`);
  const allowed = `http://localhost:${allowedPort}`;
  // The same server under another name is another origin, which the list does not hold.
  const other = `http://127.0.0.1:${allowedPort}`;

  await page.goto(`${base}/account/views`);
  await page.click(`#view-${code} form[action$="/public"] button`);
  t.match(await page.textContent('.flash'), /public/);
  await page.fill(`#origins-${code}`, allowed);
  await page.click(`#view-${code} form[action$="/embed"] button`);
  t.match(await page.textContent('.flash'), /allowed sites were saved/);
  const snippet = await page.inputValue(`#snippet-${code}`);
  t.match(snippet, new RegExp(`<iframe src="${base}/embed/${code}"`), 'a snippet to copy');
  await shot('saved-views');

  // An allowed site frames the map and timeline without the page's chrome.
  const host = await (await browser.newContext({ viewport: { width: 1000, height: 700 } })).newPage();
  await host.goto(`${allowed}/`);
  const frame = host.frameLocator('#chronomap');
  await frame.locator('body.embed #map canvas').waitFor({ timeout: 30_000 });
  t.equal(await frame.locator('#timeline').count(), 1, 'the timeline is there');
  t.equal(await frame.locator('#save-view').count(), 0, 'no page chrome in the embed');
  t.match(await frame.locator('.embed-top a').textContent(), 'Japan, January');
  // Drawn: the page's requests done and MapLibre idle (both bounded; the tiles come from the API).
  const inner = host.frames().find((f) => f.url().includes('/embed/'));
  await inner?.locator('body:not([data-loading])').waitFor({ timeout: 30_000 });
  await inner?.evaluate(
    // Browser code as text: MapLibre's 'idle' (the tiles drawn), bounded by 10 s.
    `new Promise((resolve) => { window.explore.map.once('idle', resolve); setTimeout(resolve, 10000); })`,
  );
  await screenshots(t, host)('embed');

  // Another origin: Chromium refuses to draw the frame.
  const refused = await (await browser.newContext()).newPage();
  const blocked: string[] = [];
  refused.on('console', (message) => blocked.push(message.text()));
  await refused.goto(`${other}/`);
  const embedFrame = refused.frames().find((f) => f !== refused.mainFrame());
  t.ok(embedFrame, 'the frame exists');
  const hasMap = await embedFrame!.evaluate("document.querySelector('#map') !== null").catch(() => false);
  t.equal(hasMap, false, 'but the embed is not drawn in it');
  t.ok(
    blocked.some((text) => /frame-ancestors/.test(text)),
    `the browser says why: ${blocked.join(' | ').slice(0, 300)}`,
  );
});
