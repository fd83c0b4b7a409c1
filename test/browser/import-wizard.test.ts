import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../src/adapters/postgres/database.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { reloadUntil } from '../helpers/page-polling.ts';
import { xlsx } from '../fixtures/ingest/workbooks.ts';
import { REGISTRATION_MESSAGE } from '../../src/application/accounts/register-account.ts';
import {
  countEvents,
  ingestApp,
  signIn,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../fixtures/ingest/client.ts';

// The import pages in a real browser (Debian's Chromium, JavaScript on, the pages' CSP as served):
// a new user registers on the registration page (its legal notices, a refused weak password, the
// enumeration-safe answer for a taken address) and, logged in by it, goes through the wizard (a new catalog, the upload with its
// progress bar, the detected columns, the mapping, a validation, the start) and finds their events
// on the Explore page; an owner's second upload that drops a column stops for its schema change,
// which My imports shows and approves. With CHRONOMAP_SCREENSHOTS=1 the run also refreshes
// docs/screenshots/import-wizard-*.png and my-imports*.png.

const BIRDS = [
  'seen,lat,lon,species,ref',
  '2025-05-01T06:10:00Z,52.52,13.40,Blackbird,b1',
  '2025-05-02T07:20:00Z,48.85,2.35,Robin,b2',
  '2025-05-03T08:30:00Z,51.50,-0.12,Wren,b3',
  '2025-05-04T09:40:00Z,40.42,-3.70,Swift,b4',
  '2025-05-05T10:50:00Z,41.90,12.50,Starling,b5',
].join('\n');

function scriptErrorsOf(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    // A refused API call is logged by the browser as a failed resource: the page shows it itself.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
      errors.push(message.text());
  });
  return errors;
}

t.test('a new user goes from registration through the wizard to their events on the map', async (t) => {
  const { app, db, user } = await ingestApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t, { webgl: true });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = scriptErrorsOf(page);
  const shot = screenshots(t, page);

  // The notices an admin set are what the registration page shows.
  const admin = await signIn(app, db.pool, { role: 'admin' });
  const notices = {
    termsUrl: 'https://example.org/terms',
    privacyUrl: 'https://example.org/privacy',
    registrationDisclaimer: 'Imported events are public when their catalog is.',
    contactEmail: 'team@example.org',
  };
  const set = await app.inject({
    method: 'PATCH',
    url: '/api/legal-notices',
    headers: { authorization: `Bearer ${admin.token}` },
    payload: notices,
  });
  t.equal(set.statusCode, 200, 'legal notices set');

  const email = `birder-${process.pid}@example.org`;
  const password = 'a long and careful password';
  await page.goto(`${base}/account/imports/new`);
  t.equal(new URL(page.url()).pathname, '/account/login', 'sent to the login page');
  await page.click('text=Create an account');
  t.equal(new URL(page.url()).pathname, '/account/register', 'which links to the registration page');
  t.equal(await page.textContent('h1'), 'Create an account');
  t.equal(await page.getAttribute('a[href="https://example.org/terms"]', 'href'), notices.termsUrl, 'terms');
  t.equal(
    await page.getAttribute('a[href="https://example.org/privacy"]', 'href'),
    notices.privacyUrl,
    'privacy',
  );
  t.equal(await page.textContent('#registration-disclaimer'), notices.registrationDisclaimer, 'disclaimer');
  t.ok(await page.$('a[href="mailto:team@example.org"]'), 'contact e-mail');

  // The server checks what the browser's form validation would stop: a short password is refused in words.
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'short');
  await page.evaluate('document.querySelector(\'form[action="/account/register"]\').noValidate = true');
  await page.click('button[type=submit]');
  t.match(await page.textContent('.flash.error'), /at least 10 characters/, 'a weak password is refused');
  t.equal(await page.inputValue('input[name=email]'), email, 'the e-mail is kept');

  // An address already registered gets the API's enumeration-safe answer and no session.
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', 'another long password');
  await page.click('button[type=submit]');
  t.equal(await page.textContent('.flash.ok'), REGISTRATION_MESSAGE, "the API's answer for a taken address");
  t.equal(new URL(page.url()).pathname, '/account/register', 'not logged in');

  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await shot('import-wizard-register');
  await page.click('button[type=submit]');
  t.equal(
    new URL(page.url()).pathname,
    '/account/imports/new',
    'registered, logged in and sent to the wizard',
  );
  t.match(await page.textContent('.flash.ok'), /your account is ready/);
  t.equal(await page.textContent('h1'), 'Import a file');

  // A new user has no catalog: the wizard offers a new one. Uploading without a file says so.
  await page.waitForSelector('#catalog option[value=new]', { state: 'attached' });
  t.equal(await page.inputValue('#catalog'), 'new');
  await page.fill('#catalog-title', 'Bird sightings');
  await page.check('#catalog-public');
  await page.click('#upload');
  await page.waitForSelector('#upload-error:not([hidden])');
  t.match(await page.textContent('#upload-error'), /FILE_MISSING/);

  await page.setInputFiles('#file', { name: 'birds.csv', mimeType: 'text/csv', buffer: Buffer.from(BIRDS) });
  await shot('import-wizard-upload');
  await page.click('#upload');
  await page.waitForSelector('section[data-step="3"]:not([hidden])', { timeout: 30_000 });
  t.equal(await page.textContent('#upload-percent'), '100 %', 'the upload bar reached its end');
  t.equal(await page.textContent('#draft-name'), 'birds.csv');
  t.same(
    await page.locator('#schema tbody td:first-child').allTextContents(),
    ['seen', 'lat', 'lon', 'species', 'ref'],
    'the detected columns',
  );
  t.equal(await page.locator('#sample tbody tr').count(), 5, 'the first rows');
  t.equal(await page.inputValue('#map-latitude'), 'lat', 'latitude detected');
  // The mapping is the user's to change: the time is "seen", the title the species, the id "ref".
  await page.selectOption('#map-timestamp', 'seen');
  await page.selectOption('#map-title', 'species');
  await page.selectOption('#map-id', 'ref');
  await page.click('#validate');
  await page.waitForSelector('#valid:not([hidden])');
  // A new account is at trust level 1: its limits against this file, with the numbers. The upload
  // itself was counted when the draft was stored (issue 30 §1), so the start takes only a job.
  const quotas = (await (await page.request.get(`${base}/api/quotas`)).json()).quotas;
  t.match(quotas.fileUploadsPerDay, { used: 1, limit: 5 }, 'the draft took its upload when stored');
  t.same(
    await page.locator('#quota-list li').allTextContents(),
    [
      'Import jobs: this takes 1, 9 of 10 left today after it',
      '1 KB: within your 25 MB per file',
      '5 rows: within your 50,000 per import',
      '99,995 of 100,000 events left after it',
    ],
    'the quotas said before the start',
  );
  t.equal(await page.textContent('#valid'), 'The mapping fits the file: ready to start.');
  t.ok(await page.isHidden('#drift'), 'a new dataset has no drift');
  await shot('import-wizard-mapping');

  await page.click('#start');
  await page.waitForSelector('section[data-step="4"]:not([hidden])', { timeout: 30_000 });
  t.equal(await page.textContent('#started-name'), 'birds.csv');
  const fileId = Number(await page.evaluate<string>('document.body.dataset.ingestFile'));
  t.ok(fileId > 0, 'the import started');
  await shot('import-wizard-started');
  const exploreLink = (await page.getAttribute('#explore-link', 'href')) as string;

  // Steps out of order: the upload has started, so validating it again is refused, in words.
  await page.click('#validate');
  await page.waitForSelector('#settings-error:not([hidden])');
  t.match(await page.textContent('#settings-error'), /IMPORT_ALREADY_STARTED/);

  const done = await waitForFile(app, fileId, (p) => p.status === 'completed');
  t.equal(done.status, 'completed');
  const titles = await db.pool.anyFirst(
    sql.type(row(Type.Object({ title: Type.String() })))`select title from events order by event_timestamp`,
  );
  t.same(titles, ['Blackbird', 'Robin', 'Wren', 'Swift', 'Starling'], 'titled by the mapped column');

  await page.click('text=Follow it in My imports');
  t.equal(new URL(page.url()).pathname, '/account/imports');
  await reloadUntil(page, `section.ingest-file[data-file-id="${fileId}"][data-status="completed"]`);
  t.equal(await page.textContent('h1'), 'My imports');
  await shot('my-imports');

  await page.goto(`${base}${exploreLink}`);
  const explore = new URL(page.url());
  t.equal(explore.pathname, '/');
  t.equal(explore.searchParams.get('catalog'), 'bird-sightings', 'the readable catalog slug');
  t.equal(explore.searchParams.get('datasets'), 'birds', 'the dataset slug from the file name');
  await page.waitForSelector('#event-list li', { timeout: 30_000 });
  const listed = await page.locator('#event-list li').allTextContents();
  t.equal(listed.length, 5, 'their five events are listed');
  t.ok(
    listed.every((text) => text.includes('birds')),
    'each in the dataset named after the file',
  );
  t.same(errors, [], 'no script errors (the CSP allows the page scripts)');

  // On a phone: nothing wider than the screen, and the first step is reached by keyboard alone.
  const phone = await (
    await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
  ).newPage();
  await phone.goto(`${base}/account/imports/new`);
  await phone.fill('input[name=email]', email);
  await phone.fill('input[name=password]', password);
  await phone.press('input[name=password]', 'Enter');
  await phone.waitForSelector('#catalog option', { state: 'attached' });
  t.match(
    await phone.evaluate<string>("document.querySelector('#catalog').selectedOptions[0].textContent"),
    /^Bird sightings/,
    'their catalog is offered first',
  );
  t.ok(
    await phone.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth'),
    'no sideways scrolling on a phone',
  );
  await phone.focus('#catalog');
  await phone.keyboard.press('Tab');
  t.equal(await phone.evaluate<string>('document.activeElement.id'), 'dataset', 'Tab moves through the form');
  await screenshots(t, phone)('import-wizard-phone');
});

t.test('a drifted second upload waits in My imports until its schema change is approved', async (t) => {
  const { app, db, catalogId, user } = await ingestApp(t);
  const first = (await upload(app, catalogId, { name: 'birds.csv', content: BIRDS })).json() as {
    doc: UploadedDoc;
  };
  await waitForFile(app, first.doc.id, (p) => p.status === 'completed');
  const dataset = first.doc.datasets[0] as number;
  // The second file drops "species": under the additive schema mode that breaks the schema.
  const fewer = BIRDS.split('\n')
    .map((line) => line.split(',').toSpliced(3, 1).join(','))
    .join('\n')
    .replaceAll('b', 'c');
  const second = (
    await upload(app, catalogId, { name: 'birds-june.csv', content: fewer }, { dataset: String(dataset) })
  ).json() as { doc: UploadedDoc };
  const stopped = await waitForFile(app, second.doc.id);
  t.equal(stopped.status, 'failed', 'stopped by the schema change');

  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const errors = scriptErrorsOf(page);
  await page.goto(`${base}/account/imports`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  t.equal(new URL(page.url()).pathname, '/account/imports');

  const jobId = second.doc.jobs[0]?.id as number;
  const actions = page.locator(`[data-job-actions="${jobId}"]`);
  t.match(await actions.locator('.what').textContent(), /SCHEMA_DRIFT/, 'what went wrong, in words');
  t.match(await actions.locator('.advice').textContent(), /approve/);
  t.same(
    (await actions.locator('table.drift tr').allTextContents()).map((row) => row.replace(/\s+/g, ' ').trim()),
    ['Added none', 'Removed species', 'Retyped none'],
    'the drift: which fields were added, removed and retyped',
  );
  await screenshots(t, page)('my-imports-drift');
  await actions.locator('button', { hasText: 'Approve schema changes' }).click();
  t.match(await page.textContent('.flash.ok'), /Approved: job \d+ continues at Validate schema/);
  await reloadUntil(page, `section.ingest-file[data-file-id="${second.doc.id}"][data-status="completed"]`);
  t.equal(await countEvents(db.pool, dataset), 10, 'both files are in the dataset');
  t.same(errors, []);
});

t.test('the wizard shows a drift from the target dataset at Validate, before the start', async (t) => {
  const { app, catalogId, user } = await ingestApp(t);
  const first = (await upload(app, catalogId, { name: 'birds.csv', content: BIRDS })).json() as {
    doc: UploadedDoc;
  };
  await waitForFile(app, first.doc.id, (p) => p.status === 'completed');
  const dataset = first.doc.datasets[0] as number;
  // The same file without "species" and with a "count": under the additive mode, removing breaks.
  const drifted = BIRDS.split('\n')
    .map((line, i) => [...line.split(',').toSpliced(3, 1), i === 0 ? 'count' : String(i)].join(','))
    .join('\n')
    .replaceAll('b', 'c');

  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const errors = scriptErrorsOf(page);
  await page.goto(`${base}/account/imports/new`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  await page.waitForSelector(`#dataset option[value="${dataset}"]`, { state: 'attached' });
  await page.selectOption('#dataset', String(dataset));
  await page.setInputFiles('#file', {
    name: 'birds-june.csv',
    mimeType: 'text/csv',
    buffer: Buffer.from(drifted),
  });
  await page.click('#upload');
  await page.waitForSelector('section[data-step="3"]:not([hidden])', { timeout: 30_000 });
  await page.selectOption('#map-timestamp', 'seen');
  await page.click('#validate');
  await page.waitForSelector('#drift:not([hidden])');
  t.same(
    await page.locator('#drift-list li').allTextContents(),
    [
      'added count; removed species (against schema version 1). The import will stop at "Validate schema" ' +
        'until you approve the change in My imports.',
    ],
    'added and removed columns, and what the pipeline will do about them',
  );
  t.equal(
    await page.textContent('#valid'),
    'The mapping fits the file; read what will happen below before you start.',
    'not "ready to start"',
  );
  await screenshots(t, page)('import-wizard-drift');
  // Flexible accepts any change: the same columns then only make a new schema version.
  await page.selectOption('#schema-mode', 'flexible');
  await page.click('#validate');
  await page.waitForSelector('#drift li[data-breaking=false]');
  t.match(await page.textContent('#drift-list'), /new schema version; the import goes on/);
  t.same(errors, []);
});

t.test(
  'a workbook: one dataset per sheet, a column missing from one sheet shown before the start',
  async (t) => {
    const { app, user } = await ingestApp(t);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const browser = await launchChromium(t);
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const errors = scriptErrorsOf(page);
    await page.goto(`${base}/account/imports/new`);
    await page.fill('input[name=email]', user.email);
    await page.fill('input[name=password]', user.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('#catalog option', { state: 'attached' });
    t.match(
      await page.evaluate<string>("document.querySelector('#catalog').selectedOptions[0].textContent"),
      /^Imports \(imports\)/,
      "the owner's catalog",
    );
    const book = xlsx([
      {
        name: 'Quakes',
        rows: [
          ['when', 'lat', 'lon', 'headline'],
          ['2026-01-01T00:00:00Z', 52.5, 13.4, 'Berlin'],
        ],
      },
      {
        name: 'Floods',
        rows: [
          ['when', 'lat', 'lon'],
          ['2026-01-02T00:00:00Z', 48.8, 2.3],
          ['2026-01-03T00:00:00Z', 45.4, 12.3],
        ],
      },
    ]);
    await page.setInputFiles('#file', {
      name: 'events.xlsx',
      mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      buffer: book,
    });
    await page.click('#upload');
    await page.waitForSelector('section[data-step="3"]:not([hidden])', { timeout: 30_000 });
    t.ok(await page.isVisible('#sheet'), 'a sheet picker for a workbook');
    t.same(await page.locator('#sheet option').allTextContents(), [
      'Quakes (4 columns)',
      'Floods (3 columns)',
    ]);
    await page.selectOption('#map-timestamp', 'when');
    await page.selectOption('#map-title', 'headline');
    await page.click('#validate');
    await page.waitForSelector('#invalid:not([hidden])');
    t.match(
      await page.textContent('#problems'),
      /MISSING_COLUMN.*"headline".*sheet 1/s,
      'named, with its sheet',
    );
    t.ok(await page.isDisabled('#start'), 'no start while a problem stands');
    await page.selectOption('#sheet', '1');
    t.same(
      await page.locator('#schema tbody td:first-child').allTextContents(),
      ['when', 'lat', 'lon'],
      "the other sheet's columns",
    );
    await page.selectOption('#map-timestamp', 'when');
    await page.click('#validate');
    await page.waitForSelector('#valid:not([hidden])');
    await page.click('#start');
    await page.waitForSelector('section[data-step="4"]:not([hidden])', { timeout: 30_000 });
    const fileId = Number(await page.evaluate<string>('document.body.dataset.ingestFile'));
    const done = await waitForFile(app, fileId);
    t.equal(done.status, 'completed');
    t.equal(done.jobs.length, 2, 'one job per sheet');
    t.same(errors, []);
  },
);
