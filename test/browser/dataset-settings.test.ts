import type { AddressInfo } from 'node:net';
import t from 'tap';
import { sql } from '../../src/adapters/postgres/database.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { ALL, GROUP, near, type Point, setUp } from '../helpers/location-privacy.ts';

// The dataset settings page (issue 38 §6) in Debian's Chromium: the owner finds it from My imports'
// link target, is told what readers see, is refused a bad size with a clear message, sets 1 km
// squares with k = 3, and an anonymous reader of the API then gets only the group's square centre;
// the provenance switch makes /events/{id}/provenance public. With CHRONOMAP_SCREENSHOTS=1 the run
// also refreshes docs/screenshots/dataset-privacy.png and provenance.png.

type Listed = { id: number; location: { longitude: number; latitude: number } | null };

t.test('an owner sets location privacy and provenance on the dataset settings page', async (t) => {
  const app = await setUp(t, { privacy: false });
  const datasetId = Number(
    await app.db.pool.oneFirst(sql.unsafe`select id from datasets where slug = 'sightings'`),
  );
  const anonymous = async (): Promise<Listed[]> => {
    const response = await app.app.inject({
      method: 'GET',
      url: '/api/v1/events?datasets=sightings&limit=100',
    });
    t.equal(response.statusCode, 200);
    return response.json().events as Listed[];
  };
  const points = (events: Listed[]) =>
    events.map((e): Point | null => (e.location ? [e.location.longitude, e.location.latitude] : null));
  t.equal(
    points(await anonymous()).filter((p) => p && ALL.some((q) => near(p, q))).length,
    ALL.length,
    'before: anonymous readers get the exact points',
  );

  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  const shot = screenshots(t, page);
  const settings = `${base}/account/datasets/${datasetId}/settings`;
  await page.goto(settings);
  await page.fill('input[name=email]', app.owner.email);
  await page.fill('input[name=password]', app.owner.password);
  await page.click('button[type=submit]');
  t.equal(page.url(), settings, 'the login comes back to the settings');
  t.match(await page.textContent('#reader-location'), /exact location/, 'readers see exact locations now');

  await page.check('input[name=privacy][value=on]');
  await page.fill('input[name=metres]', '5');
  await page.click('#dataset-settings-save');
  t.match(
    await page.textContent('.flash'),
    /cell size must be a whole number from 10 to 1,000,000/,
    'a size under 10 m is refused in words',
  );
  t.equal(
    await app.db.pool.oneFirst(sql.unsafe`select privacy_cell_metres from datasets where id = ${datasetId}`),
    null,
    'and nothing is saved',
  );

  await page.check('input[name=privacy][value=on]');
  await page.fill('input[name=metres]', '1000');
  await page.fill('input[name=minCount]', '3');
  await page.check('input[name=provenancePublic]');
  await page.click('#dataset-settings-save');
  t.match(await page.textContent('.flash.ok'), /recomputed/, 'the save says the locations were recomputed');
  t.match(await page.textContent('#reader-location'), /1,000 m × 1,000 m/, 'and what readers now see');
  t.match(await page.textContent('#reader-location'), /fewer than 3/);
  await shot('dataset-privacy');

  const after = await anonymous();
  const located = points(after).filter((p): p is Point => p !== null);
  t.equal(located.length, GROUP.length, 'only the group of five is placed for anonymous readers');
  t.ok(
    located.every((p) => near(p, app.centre)),
    'at the centre of its square, none at an exact point',
  );
  const ownerView = await app.app.inject({
    method: 'GET',
    url: '/api/v1/events?datasets=sightings&limit=100',
    headers: { authorization: `Bearer ${await app.login(app.owner)}` },
  });
  t.equal(
    points(ownerView.json().events as Listed[]).filter((p) => p && ALL.some((q) => near(p, q))).length,
    ALL.length,
    'the owner still gets the exact points',
  );

  // The event as an upload would have stored it (event-provenance.test.ts imports for real).
  const shown = after[0]!.id;
  await app.db.pool.query(sql.unsafe`
    with file as (
      insert into ingest_files (original_name, stored_path, size_bytes, format, source, status, sha256)
      values ('sightings-2025.csv', 'uploads/sightings-2025.csv', 4096, 'csv', 'upload', 'completed',
              ${'9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'})
      returning id),
    job as (insert into ingest_jobs (ingest_file_id, dataset_id, stage)
            select id, ${datasetId}, 'completed' from file returning id)
    update events set ingest_job_id = (select id from job), source_row = 7 where id = ${shown}`);
  const anonymousPage = await (
    await browser.newContext({ viewport: { width: 1280, height: 900 } })
  ).newPage();
  const provenance = await anonymousPage.goto(`${base}/events/${shown}/provenance`);
  t.equal(provenance?.status(), 200, 'the provenance page is public once switched on');
  t.match(await anonymousPage.textContent('body'), /sightings-2025\.csv/, 'and names the file');
  await screenshots(t, anonymousPage)('provenance');
});

t.test('someone who cannot write the dataset gets the 404 page', async (t) => {
  const app = await setUp(t, { privacy: false });
  const datasetId = Number(
    await app.db.pool.oneFirst(sql.unsafe`select id from datasets where slug = 'sightings'`),
  );
  const response = await app.app.inject({
    method: 'GET',
    url: `/account/datasets/${datasetId}/settings`,
    headers: { authorization: `Bearer ${await app.login(app.stranger)}` },
  });
  t.equal(response.statusCode, 404, 'a public dataset of someone else has no settings page for them');
});
