import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import t from 'tap';
import { Type } from 'typebox';
import { postgresUserStore } from '../../src/adapters/postgres/accounts/user-store.ts';
import { row, sql } from '../../src/adapters/postgres/database.ts';
import { scryptPasswordHasher } from '../../src/adapters/security/scrypt-password-hasher.ts';
import { policyFile, TEST_SESSION_SECRET } from '../helpers/accounts.ts';
import { testApp } from '../helpers/app.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { reloadUntil } from '../helpers/page-polling.ts';
import { RUNNER_KEY, startRealRunner, switchScrapers } from '../integration/scrapers/scraper-fixtures.ts';

// Issue 29 §1: a scraper from a new repo to events on the map, in the browser only. The whole
// service (HTTP and workers) listens on loopback with the real runner and podman, as in the
// tutorial's test; a trusted user logs in, creates a repo by uploading its files, sees the problems
// of its scrapers.yml, fixes the file in the page's editor, sets an env var (whose value is never
// shown again), the target dataset and auto-import, turns the webhook on and rotates it (the
// absolute URL shown once, and it works), runs the scraper, watches the run to its end and its
// import, follows the link to Explore and finds the events there; then stops a run of a slow
// scraper. Only the set-up is not in the browser: the admin's switch, the user and the dataset
// (a user makes datasets with the import wizard or the collections API, not on these pages).

const BROKEN_MANIFEST = `scrapers:
  - name: Market days
    slug: Market Days
    entrypoint: ../main.py
`;
const MANIFEST = `scrapers:
  - name: Market days
    slug: market-days
    entrypoint: main.py
    limits: { timeout: 60 }
  - name: Slow one
    slug: slow-one
    entrypoint: slow.py
    limits: { timeout: 120 }
`;
// The env var reaches the container: the titles are made of it.
const MAIN = `import os
from chronomap.scraper import output

town = os.environ["TOWN"]
print(f"market days of {town}")
output.write_row({"title": f"{town} flea market", "date": "2026-05-02", "latitude": 52.52, "longitude": 13.40})
output.write_row({"title": f"{town} farmers market", "date": "2026-05-09", "latitude": 52.50, "longitude": 13.42})
output.save()
`;
const SLOW = `import time
print("waiting", flush=True)
time.sleep(110)
`;
const TOWN = 'Kreuzberg-7f3a';

/** The Explore page's own signal that the map, list and timeline are drawn (polled: CSP forbids eval). */
async function mapSettled(page: Page): Promise<void> {
  const done = "!document.body.hasAttribute('data-loading') && document.body.hasAttribute('data-map-idle')";
  while (!(await page.evaluate<boolean>(done))) await new Promise((resolve) => setTimeout(resolve, 100));
}

t.test('a scraper from a new repo to events on the map, in the browser', async (t) => {
  const runner = await startRealRunner(t);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-scraper-pages-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { app, db } = await testApp(t, {
    workers: true,
    config: {
      scraperRunnerUrl: runner.url,
      scraperApiKey: RUNNER_KEY,
      sessionSecret: TEST_SESSION_SECRET,
      quotasFile: policyFile(t),
      dataDir,
    },
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  await switchScrapers(db.pool, true);
  const password = 'a long and careful password';
  const hasher = scryptPasswordHasher({ N: 1024 });
  const user = await postgresUserStore(db.pool).upsert({
    email: 'maker@example.org',
    passwordHash: await hasher.hash(password),
    role: 'user',
    trustLevel: 3,
  });
  const stranger = await postgresUserStore(db.pool).upsert({
    email: 'stranger@example.org',
    passwordHash: await hasher.hash(password),
    role: 'user',
    trustLevel: 4,
  });
  // The user's public catalog and dataset, as the collections API makes them.
  const Id = row(Type.Object({ id: Type.Number() }));
  const catalog = await db.pool.oneFirst(sql.type(Id)`
    insert into catalogs (slug, title, is_public, created_by)
    values ('my-town', 'My town', true, ${user.id}) returning id`);
  const dataset = await db.pool.oneFirst(sql.type(Id)`
    insert into datasets (catalog_id, slug, title, is_public, created_by)
    values (${catalog}, 'market-days', 'Market days', true, ${user.id}) returning id`);

  const browser = await launchChromium(t, { webgl: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  const shot = screenshots(t, page);
  const flash = () => page.textContent('.flash.ok');
  /** The notice of a form post, from its redirect: the page it leads to may reload itself at once. */
  const posted = async (click: Promise<void>) => {
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      click,
    ]);
    return new URL(String(answer.headers().location), base).searchParams.get('notice');
  };
  // A page whose sync or run is still going on reloads itself when it ends (scraper-watch.js).
  const whenShown = (selector: string) =>
    page.waitForSelector(selector, { state: 'attached', timeout: 180_000 });
  const logIn = async (email: string) => {
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', password);
    await page.click('button[type=submit]');
  };

  await page.goto(`${base}/account/scrapers`);
  await logIn(user.email);
  t.equal(new URL(page.url()).pathname, '/account/scrapers');
  await page.click('text=New repo');
  t.equal(new URL(page.url()).pathname, '/account/scrapers/new');
  await shot('scraper-new-repo');

  // A repo from uploaded files, with a manifest that has problems.
  const upload = page.locator('#new-upload');
  await upload.locator('input[name=name]').fill('Market days');
  await upload.locator('input[type=file]').setInputFiles([
    { name: 'scrapers.yml', mimeType: 'text/yaml', buffer: Buffer.from(BROKEN_MANIFEST) },
    { name: 'main.py', mimeType: 'text/x-python', buffer: Buffer.from(MAIN) },
  ]);
  t.equal(
    await posted(upload.locator('button[type=submit]').click()),
    'Created repo Market days; reading its scrapers.yml.',
  );
  const repoPath = new URL(page.url()).pathname;
  t.match(repoPath, /^\/account\/scrapers\/repos\/\d+$/, "the new repo's page");
  await whenShown('#manifest .badge.failed');
  const problems = await page.locator('ul.problems li').allTextContents();
  t.ok(problems.length >= 2, `every problem of scrapers.yml is listed: ${problems.join(' | ')}`);
  t.match(problems.join('\n'), /scrapers\[0\]\.slug/);
  t.match(problems.join('\n'), /scrapers\[0\]\.entrypoint/);
  t.match(await page.textContent('#files'), /scrapers\.yml[\s\S]*main\.py/);
  await shot('scraper-repo-problems');

  // Fixed in the editor, a second file added, and the sync reads it.
  await page.click('#files a:text-is("scrapers.yml")');
  t.equal(await page.inputValue('#editor textarea[name=content]'), BROKEN_MANIFEST, 'the file in the editor');
  await page.fill('#editor textarea[name=content]', MANIFEST);
  t.equal(
    await posted(page.click('#editor button[type=submit]')),
    'Saved scrapers.yml. Reading scrapers.yml again.',
  );
  await whenShown('#manifest .badge.synced');
  await page.click('text=New file');
  await page.fill('details[open] input[name=path]', 'slow.py');
  await page.fill('details[open] textarea[name=content]', SLOW);
  t.match(await posted(page.click('details[open] button:text("Add file")')), /^Saved slow\.py\./);
  await whenShown('#manifest .badge.synced');
  t.equal(await page.locator('ul.problems').count(), 0, 'no problems left');
  t.match(await page.textContent('#files'), /scrapers\.yml[\s\S]*main\.py[\s\S]*slow\.py/);
  await page.click('#files a:text-is("main.py")');
  await shot('scraper-repo');

  // The scraper's settings.
  await page.locator('tr[id^=scraper-]', { hasText: 'Market days' }).locator('a').first().click();
  t.match(new URL(page.url()).pathname, /^\/account\/scrapers\/scrapers\/\d+$/);
  const scraperPath = new URL(page.url()).pathname;
  await page.fill('#env-add input[name=name]', 'TOWN');
  await page.fill('#env-add input[name=value]', 'wrong town');
  await page.click('#env-add button');
  t.equal(await flash(), 'Saved TOWN; its value is not shown again.');
  t.match(await page.textContent('tr[data-env=TOWN]'), /TOWN\s*value hidden/);
  await page.fill('tr[data-env=TOWN] input[name=value]', TOWN);
  await page.click('tr[data-env=TOWN] button:text("Replace")');
  t.notOk((await page.content()).includes('wrong town'), 'no value is written into the page');
  await page.fill('#env-add input[name=name]', '1BAD');
  await page.fill('#env-add input[name=value]', 'x');
  // The browser's own check of the pattern is the page's; the server's is the API's rule.
  await page.locator('#env-add input[name=name]').evaluate((input) => input.removeAttribute('pattern'));
  await page.click('#env-add button');
  t.match(await page.textContent('.flash.error'), /letters, digits and _/, "the API's env var rule");
  await page.fill('#env-add input[name=name]', 'OLD_SETTING');
  await page.fill('#env-add input[name=value]', 'gone soon');
  await page.click('#env-add button');
  await page.click('tr[data-env=OLD_SETTING] button:text("Remove")');
  t.equal(await flash(), 'Removed OLD_SETTING.');
  t.same(
    await page.locator('tr[data-env]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-env'))),
    ['TOWN'],
  );

  await page.selectOption('#settings select[name=targetDataset]', String(dataset));
  await page.check('#settings input[name=autoImport]');
  await page.click('#settings button[type=submit]');
  t.equal(await flash(), 'Settings saved.');
  t.equal(await page.inputValue('#settings select[name=targetDataset]'), String(dataset));
  t.ok(await page.isChecked('#settings input[name=autoImport]'));
  const stored = await db.pool.one(
    sql.type(
      row(Type.Object({ env_vars: Type.Record(Type.String(), Type.String()), auto_import: Type.Boolean() })),
    )`select env_vars, auto_import from scrapers where slug = 'market-days'`,
  );
  t.same(stored, { env_vars: { TOWN }, auto_import: true }, 'stored as the API stores them');
  t.notOk((await page.content()).includes(TOWN), "the env var's value is nowhere in the page");

  // The webhook: its absolute URL once, a new one on rotation, and it starts a run.
  await page.click('#webhook button:text("Turn on")');
  const firstUrl = (await page.textContent('[data-field=webhook-url]')) ?? '';
  t.match(firstUrl, new RegExp(`^${base}/api/webhooks/trigger/[0-9a-f]{64}$`), 'the absolute URL');
  await shot('scraper-settings-webhook');
  await page.goto(`${base}${scraperPath}`);
  t.equal(await page.locator('[data-field=webhook-url]').count(), 0, 'shown only once');
  t.match(await page.textContent('#webhook .badge'), 'on');
  await page.click('#webhook button:text("Rotate URL")');
  const rotated = (await page.textContent('[data-field=webhook-url]')) ?? '';
  t.not(rotated, firstUrl, 'a new URL');
  t.equal((await context.request.post(firstUrl)).status(), 404, 'the old URL no longer works');

  // Run now: the run's page follows the run to its end and its import.
  await page.click('button:text("Run now")');
  const runPath = new URL(page.url()).pathname;
  t.match(runPath, /^\/account\/scrapers\/runs\/\d+$/, "the run's page");
  await whenShown('[data-run-status=success], [data-run-status=failed], [data-run-status=timeout]');
  const ended = await page.getAttribute('[data-run-status]', 'data-run-status');
  if (ended !== 'success') t.comment((await page.textContent('main')) ?? '');
  t.equal(ended, 'success', 'the run succeeded');
  t.match(await page.textContent('pre.log'), `market days of ${TOWN}`, 'stdout, with the env var');
  t.match(await page.textContent('[data-field=output]'), /2 rows/);
  t.equal(await page.locator('button:text("Stop run")').count(), 0, 'no stop button once it ended');
  await reloadUntil(page, '[data-field=import-status].completed', 180_000);
  t.match(await page.textContent('[data-field=import]'), /2 new, 0 unchanged/);
  await shot('scraper-run');

  await page.click('[data-link=explore]');
  t.equal(new URL(page.url()).search, '?datasets=market-days', 'Explore, on the target dataset');
  await mapSettled(page);
  t.same(
    (await page.locator('#event-list li .name').allTextContents()).sort(),
    [`${TOWN} farmers market`, `${TOWN} flea market`],
    "the scraper's events on the map",
  );

  // The rotated webhook starts a run too (no login: the URL is the credential).
  const hooked = await context.request.post(rotated);
  t.equal(hooked.status(), 200, 'the URL shown works');
  const hookRun = (await hooked.json()).run.id as number;
  await page.goto(`${base}/account/scrapers/runs/${hookRun}`);
  await whenShown('[data-run-status=success]');
  await page.goto(`${base}${scraperPath}`);
  await page.click('#webhook button:text("Turn off")');
  t.equal(await flash(), 'Webhook turned off; its URL no longer works.');
  t.equal((await context.request.post(rotated)).status(), 404);

  // A slow scraper, stopped from its run's page while it runs.
  await page.goto(`${base}${repoPath}`);
  await page.click('#scraper-' + (await slowScraperId()) + ' button:text("Run now")');
  await whenShown('[data-run-status=running]');
  t.ok(await page.isVisible('button:text("Stop run")'), 'a stop button while it runs');
  await page.click('button:text("Stop run")');
  t.equal(await flash(), 'Run stopped.');
  t.equal(await page.getAttribute('[data-run-status]', 'data-run-status'), 'failed');
  t.match(await page.textContent('pre.error'), /cancelled by a user \(CANCELLED\)/);

  // Another user is told nothing; a form without its token does nothing.
  const other = await browser.newContext();
  const otherPage = await other.newPage();
  await otherPage.goto(`${base}${runPath}`);
  await otherPage.fill('input[name=email]', stranger.email);
  await otherPage.fill('input[name=password]', password);
  await otherPage.click('button[type=submit]');
  t.equal(await otherPage.textContent('h1'), 'Not found', "someone else's run is not found");
  for (const target of [runPath, repoPath, scraperPath]) {
    await otherPage.goto(`${base}${target}`);
    t.equal(await otherPage.textContent('h1'), 'Not found', `${target} is not found for them`);
  }
  const forged = await context.request.post(`${base}${scraperPath}/env/remove`, {
    form: { name: 'TOWN' },
    maxRedirects: 0,
  });
  t.equal(forged.status(), 403, 'a post without the CSRF token is refused');
  await other.close();
  t.same(errors, [], 'no script errors');

  async function slowScraperId(): Promise<number> {
    return db.pool.oneFirst(sql.type(Id)`select id from scrapers where slug = 'slow-one'`);
  }
});
