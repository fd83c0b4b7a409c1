import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseString } from 'fast-csv';
import type { Page } from 'playwright-core';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../src/adapters/postgres/database.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { reloadUntil } from '../helpers/page-polling.ts';
import { ingestApp } from '../fixtures/ingest/client.ts';

// The first hour of a new user, as issue 28 measured it, in a real browser and on the shipped quota
// policy (config/quotas.yaml): register, import the project's own sample (the 1,943 USGS earthquakes
// that `chronomap seed-demo` loads) on the default trust level, see it complete, find the events on
// Explore under the title column chosen in the wizard, and download the view: the download holds
// the file's rows, each with its title, time and place.

const SAMPLE = path.join(import.meta.dirname, '..', '..', 'examples', 'usgs-earthquakes.csv');

type Row = Record<string, string>;

function csvRows(text: string): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    const rows: Row[] = [];
    parseString(text, { headers: true })
      .on('error', reject)
      .on('data', (row: Row) => rows.push(row))
      .on('end', () => resolve(rows));
  });
}

/** The Explore page's own signal that the map, list and timeline are drawn (polled: CSP forbids eval). */
async function mapSettled(page: Page): Promise<void> {
  const deadline = Date.now() + 60_000;
  const done = "!document.body.hasAttribute('data-loading') && document.body.hasAttribute('data-map-idle')";
  while (!(await page.evaluate<boolean>(done))) {
    if (Date.now() > deadline) throw new Error('Explore did not settle in 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** What clicking a download link saves, as text. */
async function downloadOf(page: Page, selector: string): Promise<string> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return readFileSync((await download.path()) as string, 'utf8');
}

t.test(
  'register, import the bundled sample on the default level, see it on Explore, download it',
  async (t) => {
    const { app, db } = await ingestApp(t);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const browser = await launchChromium(t, { webgl: true });
    const context = await browser.newContext({
      viewport: { width: 1280, height: 900 },
      acceptDownloads: true,
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    const shot = screenshots(t, page);

    const email = `first-hour-${process.pid}@example.org`;
    await page.goto(`${base}/account/register`);
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', 'a long and careful password');
    await page.click('button[type=submit]');
    t.equal(new URL(page.url()).pathname, '/account/imports/new', 'registered and sent to the wizard');
    const level = await db.pool.oneFirst(
      sql.type(row(Type.Object({ trust_level: Type.Number() })))`
      select trust_level from users where email = ${email}`,
    );
    t.equal(level, 1, 'on the default trust level of the shipped policy');

    await page.waitForSelector('#catalog option[value=new]', { state: 'attached' });
    await page.fill('#catalog-title', 'Earthquakes');
    await page.check('#catalog-public');
    await page.setInputFiles('#file', SAMPLE);
    await page.click('#upload');
    await page.waitForSelector('section[data-step="3"]:not([hidden])', { timeout: 60_000 });
    t.equal(await page.inputValue('#map-timestamp'), 'time', 'the time column detected');
    t.equal(await page.inputValue('#map-latitude'), 'latitude', 'latitude detected');
    t.equal(await page.inputValue('#map-longitude'), 'longitude', 'longitude detected');
    t.equal(
      await page.inputValue('#map-title'),
      'place',
      'no column is named like a title: the place names it',
    );
    await page.selectOption('#map-id', 'id');
    await page.click('#validate');
    await page.waitForSelector('#valid:not([hidden])');
    await page.click('#start');
    await page.waitForSelector('section[data-step="4"]:not([hidden])', { timeout: 60_000 });
    const fileId = Number(await page.evaluate<string>('document.body.dataset.ingestFile'));
    const exploreLink = (await page.getAttribute('#explore-link', 'href')) as string;

    await page.click('text=Follow it in My imports');
    await reloadUntil(
      page,
      `section.ingest-file[data-file-id="${fileId}"][data-status="completed"], section.ingest-file[data-file-id="${fileId}"][data-status="failed"]`,
      180_000,
    );
    t.equal(
      await page.getAttribute(`section.ingest-file[data-file-id="${fileId}"]`, 'data-status'),
      'completed',
      'the whole sample imported on the default level',
    );

    const sample = await csvRows(readFileSync(SAMPLE, 'utf8'));
    t.equal(sample.length, 1943, 'the sample has 1,943 rows');
    const byId = new Map(sample.map((quake) => [quake.id as string, quake]));

    await page.goto(`${base}${exploreLink}`);
    await mapSettled(page);
    const listed = await page.locator('#event-list li .name').allTextContents();
    const places = new Set(sample.map((quake) => quake.place?.trim()));
    t.ok(listed.length > 0, 'Explore lists the events');
    t.same(
      listed.filter((name) => !places.has(name)),
      [],
      'each under its title, the place the wizard mapped',
    );
    await shot('first-hour-explore');
    const inView = Number(await page.evaluate<number>('window.explore.status.listTotal'));
    // A world-wide data set gets the whole world's width the map can show (MapLibre keeps the world at
    // least as tall as the map, so not every longitude fits in a landscape window): most of it in view.
    t.ok(inView > sample.length / 2 && inView <= sample.length, `${inView} of ${sample.length} in view`);

    const downloaded = await csvRows(await downloadOf(page, '#download-all-csv'));
    t.equal(downloaded.length, sample.length, 'the download holds every row of the file');
    const mismatches = downloaded.filter((event) => {
      const quake = byId.get(event['data.id'] ?? '');
      return (
        quake === undefined ||
        event.title !== quake.place?.trim() ||
        event.eventTimestamp !== quake.time ||
        Number(event.latitude) !== Number(quake.latitude) ||
        Number(event.longitude) !== Number(quake.longitude)
      );
    });
    t.same(mismatches.slice(0, 3), [], "each row: the file's id, place as title, time and coordinates");
    const geojson = JSON.parse(await downloadOf(page, '#download-all-geojson')) as {
      features: { properties: { title: string } }[];
    };
    t.equal(geojson.features.length, sample.length, 'and the GeoJSON download every event');
    t.ok(
      geojson.features.every((feature) => places.has(feature.properties.title)),
      'each feature titled',
    );
    const viewCsv = await csvRows(await downloadOf(page, '#download-csv'));
    t.equal(viewCsv.length, inView, 'the view download holds the events in view');
    t.same(errors, [], 'no script errors');
  },
);
