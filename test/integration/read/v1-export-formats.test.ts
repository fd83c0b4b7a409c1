import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// The text formats beside GeoJSON and CSV (postgres/read/export.ts): GeoJSON text sequences (RFC
// 8142) and KML, read back by GDAL (Debian's 3.6: GeoJSONSeq and KML drivers) and compared with
// /api/v1/events for the same filter; hostile text (markup, control characters) stays well-formed.

const run = promisify(execFile);

type Event = { id: number; title: string | null; location: { longitude: number; latitude: number } | null };

/** The features GDAL reads from `file`, as GeoJSON (ogr2ogr to standard output). */
async function readWithGdal(
  file: string,
): Promise<Array<{ properties: Record<string, unknown>; geometry: { coordinates: number[] } | null }>> {
  const { stdout } = await run('ogr2ogr', ['-f', 'GeoJSON', '/vsistdout/', file], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout).features;
}

t.test('GeoJSON text sequences and KML: every event of the filter, as GDAL reads them', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    values (${fixture.datasetIds.protests ?? 0}, ${fixture.catalogIds.news ?? 0}, 'hostile',
            E'<b>A & B</b> \\x01"quoted"', '{"note": "</value></Data><script>", "n": 5}',
            st_setsrid(st_makepoint(13.5, 52.25), 4326), '2024-02-02T00:00:00Z')`);
  const directory = t.testdir();
  const filter = { catalog: 'news', sort: 'id' };
  const events = (await getJson(app, '/api/v1/events', { ...filter, limit: '1000' })).body.events as Event[];
  t.ok(events.length > 10, 'a filter with events');

  const seq = await app.inject({
    method: 'GET',
    url: `/api/v1/events.geojsonseq?${new URLSearchParams(filter)}`,
  });
  t.equal(seq.statusCode, 200);
  t.equal(seq.headers['content-type'], 'application/geo+json-seq');
  const records = seq.payload.split('\x1e');
  t.equal(records.shift(), '', 'the text starts with a record separator');
  t.ok(
    records.every((record) => record.endsWith('\n')),
    'each record ends with a line feed',
  );
  t.same(
    records.map((record) => JSON.parse(record).id),
    events.map((event) => event.id),
    'one feature per event, in order',
  );
  const seqFile = path.join(directory, 'events.geojsons');
  writeFileSync(seqFile, seq.rawPayload);
  const fromSeq = await readWithGdal(seqFile);
  t.equal(fromSeq.length, events.length, 'GDAL (GeoJSONSeq) reads every feature');

  const kml = await app.inject({ method: 'GET', url: `/api/v1/events.kml?${new URLSearchParams(filter)}` });
  t.equal(kml.statusCode, 200);
  t.equal(kml.headers['content-type'], 'application/vnd.google-earth.kml+xml');
  const kmlFile = path.join(directory, 'events.kml');
  writeFileSync(kmlFile, kml.rawPayload);
  const fromKml = await readWithGdal(kmlFile);
  t.equal(fromKml.length, events.length, 'GDAL (KML) reads every Placemark');
  const near = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-9;
  t.ok(
    events.every((event, index) => {
      const coordinates = fromKml[index]?.geometry?.coordinates;
      if (event.location === null) return coordinates === undefined;
      return (
        near(coordinates?.[0], event.location.longitude) && near(coordinates?.[1], event.location.latitude)
      );
    }),
    'the locations, in order (none where an event has none)',
  );
  t.same(
    fromKml.map((feature) => feature.properties.Name ?? null),
    events.map((event) => (event.title === null ? null : event.title.replaceAll('\u0001', ''))),
    'the titles, markup kept as text, control characters removed',
  );
  const hostile = fromKml.find((feature) => String(feature.properties.Name).startsWith('<b>'));
  t.match(
    String(hostile?.properties.Description ?? JSON.stringify(hostile?.properties)),
    /<\/value><\/Data><script>/,
    'data text stays text',
  );
});

t.test('GeoPackage: a kept file GDAL opens without a warning, every event with its location', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadReadFixture(db.pool);
  const filter = { catalog: 'news', sort: 'id' };
  const events = (await getJson(app, '/api/v1/events', { ...filter, limit: '1000' })).body.events as Event[];
  const url = `/api/v1/events.gpkg?${new URLSearchParams(filter)}`;
  const answer = await app.inject({ method: 'GET', url });
  t.equal(answer.statusCode, 200);
  t.equal(answer.headers['content-type'], 'application/geopackage+sqlite3');
  t.equal(Number(answer.headers['content-length']), answer.rawPayload.length, 'a file: its length');
  t.equal(answer.rawPayload.subarray(0, 16).toString('latin1'), 'SQLite format 3\0');
  const part = await app.inject({ method: 'GET', url, headers: { range: 'bytes=0-99' } });
  t.equal(part.statusCode, 206, 'read by range');
  t.ok(part.rawPayload.equals(answer.rawPayload.subarray(0, 100)));

  const file = path.join(t.testdir(), 'events.gpkg');
  writeFileSync(file, answer.rawPayload);
  const info = await run('ogrinfo', ['-ro', '-so', '-al', file]);
  t.equal(info.stderr, '', 'GDAL has nothing to warn about');
  t.match(info.stdout, /Geometry: Point/);
  t.match(info.stdout, new RegExp(`Feature Count: ${events.length}\\b`));
  const features = await readWithGdal(file);
  t.equal(features.length, events.length);
  const near = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 1e-9;
  t.ok(
    events.every((event, index) => {
      const feature = features[index];
      const coordinates = feature?.geometry?.coordinates;
      const located =
        event.location === null
          ? coordinates === undefined
          : near(coordinates?.[0], event.location.longitude) &&
            near(coordinates?.[1], event.location.latitude);
      return located && (feature?.properties.title ?? null) === event.title;
    }),
    'every event, in order, with its location and title',
  );
});

t.test('the new formats take the same parameters and answer bad ones as the others do', async (t) => {
  const { app } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  for (const format of ['geojsonseq', 'kml', 'gpkg']) {
    const bad = await app.inject({ method: 'GET', url: `/api/v1/events.${format}?sort=data.x` });
    t.equal(bad.statusCode, 400, `${format}: a sort an export cannot walk`);
    t.match(bad.json(), { error: 'Bad Request' });
    const empty = await app.inject({ method: 'GET', url: `/api/v1/events.${format}` });
    t.equal(empty.statusCode, 200, `${format}: no events is an empty export`);
  }
});
