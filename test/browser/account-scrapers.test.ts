import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../src/adapters/postgres/database.ts';
import { syncScraperRepo } from '../../src/application/scrapers/sync-scraper-repo.ts';
import type { RunOutcome } from '../../src/domain/scrapers/scrapers.ts';
import { composeScraperDeps } from '../helpers/compose.ts';
import { accountsApp, PASSWORD } from '../helpers/accounts.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { testConfig } from '../helpers/app.ts';
import { completedScraperImport, openBoss } from '../integration/scrapers/scraper-fixtures.ts';

// /account/scrapers in a real browser (Debian's Chromium) with JavaScript switched off: a user logs
// in, sees their repos, scrapers and run output (escaped), forces a sync, triggers a run and
// deletes a repo; a post without the CSRF token is refused. Runs are written through the stores,
// so no runner is needed. With CHRONOMAP_SCREENSHOTS=1 the run also refreshes docs/screenshots/.

const MANIFEST = `scrapers:
  - { name: Concert listings, slug: concerts, entrypoint: main.py, schedule: "0 6 * * *" }
  - { name: Venue directory, slug: venues, entrypoint: venues.py }
`;
const BROKEN = `scrapers:
  - { name: Council, slug: Council, entrypoint: ../main.py, limits: { timeout: 5 } }
`;
const HOSTILE = '<script>alert("stdout")</script>';

t.test('/account/scrapers in Chromium without JavaScript', async (t) => {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const scrapers = composeScraperDeps(testConfig(), db.pool, await openBoss(t, db));
  const admin = await createUser({ role: 'admin', trustLevel: 5, email: 'admin@example.org' });
  const adminApi = as(await login(admin));
  await adminApi('PATCH', '/api/feature-flags', { enableScrapers: true });
  const tessa = await createUser({ trustLevel: 3, email: 'tessa@example.org' });
  const tessaApi = as(await login(tessa));
  const omar = await createUser({ trustLevel: 4, email: 'omar@example.org' });
  const regular = await createUser({ trustLevel: 2, email: 'reg@example.org' });

  const createRepo = async (api: typeof tessaApi, body: Record<string, unknown>) => {
    const response = await api('POST', '/api/scraper-repos', body);
    if (response.statusCode !== 201) throw new Error(response.body);
    return response.json().doc.id as number;
  };
  const events = await createRepo(tessaApi, {
    name: 'Berlin events',
    slug: 'berlin-events',
    sourceType: 'upload',
    code: { 'scrapers.yml': MANIFEST, 'main.py': 'print(1)\n', 'venues.py': 'print(2)\n' },
  });
  const council = await createRepo(tessaApi, {
    name: 'City council',
    slug: 'city-council',
    sourceType: 'upload',
    code: { 'scrapers.yml': BROKEN, 'main.py': 'print(1)\n' },
  });
  const omars = await createRepo(as(await login(omar)), {
    name: 'Omar weather',
    slug: 'omar-weather',
    sourceType: 'git',
    gitUrl: 'https://git.example.org/omar/weather.git',
  });
  for (const repo of [events, council]) await syncScraperRepo(scrapers, repo);
  const [concerts, venues] = await scrapers.scrapers.listByRepo(events);
  if (!concerts || !venues) throw new Error('the sync made no scrapers');

  const finished = async (scraperId: number, outcome: Partial<RunOutcome>) => {
    const run = await scrapers.runs.createQueued({
      scraperId,
      runId: crypto.randomUUID(),
      triggeredBy: 'manual',
      triggeredByUser: tessa.id,
      scheduledFor: null,
    });
    if (!run) throw new Error('no run');
    await scrapers.runs.start(run.id);
    await scrapers.runs.finish(run.id, 'running', {
      status: 'success',
      exitCode: 0,
      durationMs: 4200,
      stdout: '',
      stderr: '',
      error: null,
      errorCode: null,
      outputRows: 12,
      outputBytes: 830,
      resultFile: null,
      ...outcome,
    });
    return run.id;
  };
  const importedRun = await finished(concerts.id, {
    stdout: 'fetching page 1\nfetching page 2\nwrote 12 rows\n',
  });
  // Its auto-import completed: the twelve rows were all stored by earlier runs already.
  const importFile = await completedScraperImport(db.pool, {
    internal: 0,
    external: 12,
    created: 0,
    updated: 0,
    duplicates: 12,
  });
  await scrapers.runs.recordImport(importedRun, { ingestFileId: importFile });
  const failedRun = await finished(concerts.id, {
    status: 'failed',
    exitCode: 1,
    durationMs: 800,
    stdout: `fetching page 1\n${HOSTILE}\n`,
    stderr: 'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\nKeyError: \'date\'\n',
    error: 'the scraper exited with code 1',
    errorCode: 'NON_ZERO_EXIT',
    outputRows: null,
    outputBytes: null,
  });

  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const newPage = async () => {
    const context = await browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: 1280, height: 800 },
    });
    return { context, page: await context.newPage() };
  };
  const { context, page } = await newPage();
  const shot = screenshots(t, page);
  const logIn = async (email: string, password = PASSWORD) => {
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', password);
    await page.click('button[type=submit]');
  };

  await page.goto(`${base}/account/scrapers`);
  t.equal(new URL(page.url()).pathname, '/account/login', 'anonymous visitors are sent to the login');
  await logIn(tessa.email, 'wrong password');
  t.match(await page.textContent('.flash.error'), /incorrect/);
  await logIn(tessa.email);
  t.equal(new URL(page.url()).pathname, '/account/scrapers');
  t.equal(await page.textContent('h1'), 'Your scrapers');

  const eventsCard = page.locator(`#repo-${events}`);
  t.match(await eventsCard.textContent(), /Berlin events[\s\S]*synced[\s\S]*upload, 3 files/);
  const councilCard = page.locator(`#repo-${council}`);
  t.match(await councilCard.locator('.badge.failed').textContent(), 'failed');
  t.match(await councilCard.locator('pre.error').textContent(), /scrapers\[0\]\.slug/);
  t.equal(await page.locator(`#repo-${omars}`).count(), 0, "another user's repo is not shown");
  const concertsRow = page.locator(`#scraper-${concerts.id}`);
  t.match(await concertsRow.textContent(), /Concert listings[\s\S]*python[\s\S]*0 6 \* \* \*/);
  t.match(await concertsRow.locator('.badge.failed').first().textContent(), 'failed', 'last run status');
  t.match(await concertsRow.textContent(), /2 \(1 \/ 1\)/, 'runs, successes and failures');
  t.match(await page.locator(`#scraper-${venues.id}`).textContent(), /No runs yet/);
  t.notOk(await concertsRow.locator('pre.log').first().isVisible(), 'output is folded away');
  await shot('account-scrapers');

  await concertsRow.locator('details.history > summary').click();
  t.match(
    (await concertsRow.locator('details.history table').textContent())?.replace(/\s+/g, ' '),
    `completed 0 new, 12 unchanged import #${importFile}`,
    "the run's import outcome, with the import it made",
  );
  t.equal(
    await concertsRow.locator('details.history table a', { hasText: 'import #' }).getAttribute('href'),
    `/account/imports#import-${importFile}`,
  );
  const output = concertsRow.locator('details.output', { hasText: `Output of run ${failedRun}` });
  await output.locator('summary').click();
  const stdout = output.locator('pre.log').first();
  t.ok(await stdout.isVisible(), 'output unfolded');
  t.match(await stdout.textContent(), HOSTILE, 'the output is shown as text');
  t.equal(await output.locator('script').count(), 0, 'and never as markup');
  t.match(await output.locator('pre.log.err').textContent(), /KeyError: 'date'/);
  // The project compiles without the DOM library: the page's getComputedStyle is reached through globalThis.
  type Styles = { getComputedStyle(element: unknown): Record<string, string> };
  const style = await stdout.evaluate((element) => {
    const computed = (globalThis as unknown as Styles).getComputedStyle(element);
    return [computed.fontFamily, computed.overflowY, computed.maxHeight];
  });
  t.match(style, [/mono/i, 'auto', '320px'], 'monospace, scrollable, bounded');
  await shot('account-scrapers-run-output');

  const Count = row(Type.Object({ n: Type.Number() }));
  await concertsRow.locator('button', { hasText: 'Run now' }).click();
  t.match(await page.textContent('.flash.ok'), /^Run \d+ of Concert listings queued\.$/);
  t.match(new URL(page.url()).pathname, /^\/account\/scrapers\/runs\/\d+$/, "and the run's page is shown");
  t.match(await page.locator('[data-run-status]').getAttribute('data-run-status'), 'queued');
  await page.goto(`${base}/account/scrapers`);
  t.equal(
    await db.pool.oneFirst(sql.type(Count)`
      select count(*)::int as n from scraper_runs where scraper_id = ${concerts.id} and status = 'queued'`),
    1,
  );
  await page.locator(`#repo-${events} button`, { hasText: 'Force sync' }).click();
  t.equal(await page.textContent('.flash.ok'), 'Sync queued.');
  t.match(await page.locator(`#repo-${events} .badge.pending`).textContent(), 'pending');

  const forged = await context.request.post(`${base}/account/scrapers/repos/${events}/delete`, {
    form: { note: 'no token' },
    maxRedirects: 0,
  });
  t.equal(forged.status(), 403, 'a post without the CSRF token is refused');
  const wrongToken = await context.request.post(`${base}/account/scrapers/repos/${events}/delete`, {
    form: { _csrf: 'x'.repeat(43) },
    maxRedirects: 0,
  });
  t.equal(wrongToken.status(), 403, 'and one with a made-up token');
  t.equal(
    await db.pool.oneFirst(
      sql.type(Count)`select count(*)::int as n from scraper_repos where id = ${events}`,
    ),
    1,
  );

  await page.locator(`#repo-${council} button`, { hasText: 'Delete repo' }).click();
  t.equal(await page.textContent('.flash.ok'), 'Deleted repo City council.');
  t.equal(await page.locator(`#repo-${council}`).count(), 0);

  await page.click('text=Log out');
  t.equal(new URL(page.url()).pathname, '/account/login');
  t.equal(await page.textContent('.flash.ok'), 'You are logged out.');

  await logIn(regular.email);
  t.equal(await page.textContent('h1'), 'Scrapers need trust level 3', 'level 2 has no scraper page');
  await page.click('text=Log out');

  await logIn(admin.email);
  t.equal(await page.textContent('h1'), 'All scraper repos');
  t.match(
    await page.locator(`#repo-${omars}`).textContent(),
    /Omar weather[\s\S]*git[\s\S]*weather\.git[\s\S]*main[\s\S]*omar@example\.org/,
  );
  t.ok(await page.locator(`#repo-${events}`).isVisible(), 'admins see every repo');
  await context.close();
});
