import type { AddressInfo } from 'node:net';
import t from 'tap';
import { accountsApp, PASSWORD } from '../helpers/accounts.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';

// The dashboard in a real browser (Debian's Chromium) with JavaScript switched off: a person can log
// in, switch a flag, manage users, catalogs and datasets. With CHRONOMAP_SCREENSHOTS=1 the run also
// refreshes docs/screenshots/.

t.test('the dashboard in Chromium without JavaScript', async (t) => {
  const { app, createUser, login, as } = await accountsApp(t);
  const admin = await createUser({ role: 'admin', email: 'admin@example.org' });
  const alice = await createUser({ email: 'alice@example.org', trustLevel: 2 });
  const aliceApi = as(await login(alice));
  const catalog = (
    await aliceApi('POST', '/api/catalogs', { slug: 'city-noise', title: 'City noise', isPublic: true })
  ).json().doc.id;
  await aliceApi('POST', '/api/datasets', { catalog, slug: 'noise-2024', title: 'Noise complaints 2024' });
  await aliceApi('POST', '/api/datasets', {
    catalog,
    slug: 'noise-drafts',
    title: 'Drafts',
    isPublic: false,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  const browser = await launchChromium(t);
  const context = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 1280, height: 800 },
  });
  const page = await context.newPage();
  const shot = screenshots(t, page);

  await page.goto(`${base}/dashboard`);
  t.equal(new URL(page.url()).pathname, '/dashboard/login', 'sent to the login page');
  await page.fill('input[name=email]', admin.email);
  await page.fill('input[name=password]', 'wrong password');
  await page.click('button[type=submit]');
  t.match(await page.textContent('.flash.error'), /incorrect/);
  await shot('login');
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
  t.equal(new URL(page.url()).pathname, '/dashboard');
  t.equal(await page.textContent('h1'), 'Overview');
  await shot('overview');

  await page.click('nav >> text=Settings');
  await page.check('input[name=enableScrapers]');
  await page.click('text=Save settings');
  t.equal(await page.textContent('.flash.ok'), 'Settings saved.');
  t.ok(await page.isChecked('input[name=enableScrapers]'));
  t.equal((await as(null)('GET', '/api/feature-flags')).json().enableScrapers, true);
  await shot('settings');

  await page.click('nav >> text=Users');
  await page.selectOption(`select[aria-label="Trust level of ${alice.email}"]`, '3');
  await page.click(`form[action="/dashboard/users/${alice.id}"] button`);
  t.equal(await page.textContent('.flash.ok'), `Saved ${alice.email}.`);
  // A raise keeps alice's sessions and applies at her next request; a lowering ends them (issue 28 §1).
  t.equal(
    (await aliceApi('GET', '/api/users/me')).json().user?.trustLevel,
    3,
    "the raise applies in alice's session, without logging her out",
  );
  await page.selectOption(`select[aria-label="Trust level of ${alice.email}"]`, '1');
  await page.click(`form[action="/dashboard/users/${alice.id}"] button`);
  t.equal(await page.textContent('.flash.ok'), `Saved ${alice.email}.`);
  t.equal((await aliceApi('GET', '/api/users/me')).json().user, null, "the lowering ended alice's sessions");
  t.equal((await as(await login(alice))('GET', '/api/users/me')).json().user.trustLevel, 1);
  await shot('users');

  await page.click('nav >> text=Catalogs');
  await page.fill('input[name=title]', 'River floods');
  await page.fill('input[name=slug]', 'river-floods');
  await page.fill('textarea[name=description]', 'Flood events along the major rivers.');
  await page.click('text=Create catalog');
  t.equal(await page.textContent('.flash.ok'), 'Created catalog River floods.');
  t.match(await page.textContent('h1'), /River floods\s+private/);
  await page.fill('form[action$="/datasets"] input[name=title]', 'Gauge readings');
  await page.fill('form[action$="/datasets"] input[name=slug]', 'gauge-readings');
  await page.click('text=Create dataset');
  t.equal(await page.textContent('.flash.ok'), 'Created dataset Gauge readings.');
  await page.click('text=Make private');
  t.equal(await page.textContent('.flash.ok'), 'Gauge readings is now private.');
  await shot('catalog');

  await page.click('nav >> text=Catalogs');
  t.match(await page.textContent('table'), /City noise/);
  await shot('catalogs');
  await page.click('text=City noise');
  await page.click('text=Drafts');
  await page.check('input[name=isPublic]');
  await page.click('text=Save dataset');
  t.equal(await page.textContent('.flash.ok'), 'Dataset saved.');
  t.equal(
    (await as(null)('GET', '/api/datasets?where[slug][equals]=noise-drafts')).json().totalDocs,
    1,
    'now public',
  );
  await shot('dataset');

  await page.click('text=Log out');
  t.equal(new URL(page.url()).pathname, '/dashboard/login');
  t.equal(await page.textContent('.flash.ok'), 'You are logged out.');
});
