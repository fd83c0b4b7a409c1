import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import t from 'tap';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { loadQuakes } from '../../helpers/ogc-quakes.ts';
import { getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// FlatGeobuf and GeoParquet exports (adapters/files/flatgeobuf-writer.ts, geoparquet-writer.ts) and
// the typed properties of an export of one dataset in FlatGeobuf, GeoParquet, GeoPackage and KML.
// FlatGeobuf, GeoPackage and KML are read back by GDAL 3.6 (Debian); GDAL 3.6 has no Parquet driver
// and the machine no pyarrow, so GeoParquet is read by hyparquet (an independent reader: the writer
// is hyparquet-writer), `geo` metadata and all. Everything is compared with /api/v1/events.

const run = promisify(execFile);

type Event = {
  id: number;
  title: string | null;
  eventTimestamp: string;
  location: { longitude: number; latitude: number } | null;
};
type GdalFeature = { properties: Record<string, unknown>; geometry: { coordinates: number[] } | null };

async function readWithGdal(file: string, options: string[] = []): Promise<GdalFeature[]> {
  const { stdout } = await run('ogr2ogr', ['-f', 'GeoJSON', '/vsistdout/', file, ...options], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout).features;
}

const near = (a: unknown, b: number) => typeof a === 'number' && Math.abs(a - b) < 1e-9;

/** A WKB point's coordinates (hyparquet may also have decoded it to GeoJSON already). */
function pointOf(geometry: unknown): number[] | null {
  if (geometry === null || geometry === undefined) return null;
  if (geometry instanceof Uint8Array) {
    const view = Buffer.from(geometry);
    return [view.readDoubleLE(5), view.readDoubleLE(13)];
  }
  return (geometry as { coordinates: number[] }).coordinates;
}

t.test('FlatGeobuf: a kept file with a spatial index, every event as GDAL reads it', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadReadFixture(db.pool);
  const filter = { catalog: 'news', sort: 'id' };
  const events = (await getJson(app, '/api/v1/events', { ...filter, limit: '1000' })).body.events as Event[];
  t.ok(events.length > 10, 'a filter with events');
  const url = `/api/v1/events.fgb?${new URLSearchParams(filter)}`;
  const answer = await app.inject({ method: 'GET', url });
  t.equal(answer.statusCode, 200);
  t.equal(answer.headers['content-type'], 'application/flatgeobuf');
  t.equal(Number(answer.headers['content-length']), answer.rawPayload.length, 'a file: its length');
  const part = await app.inject({ method: 'GET', url, headers: { range: 'bytes=0-7' } });
  t.equal(part.statusCode, 206, 'read by range');
  t.same([...part.rawPayload], [0x66, 0x67, 0x62, 0x03, 0x66, 0x67, 0x62, 0x00], 'the magic bytes');

  const file = path.join(t.testdir(), 'events.fgb');
  writeFileSync(file, answer.rawPayload);
  const info = await run('ogrinfo', ['-ro', '-so', '-al', file]);
  t.equal(info.stderr, '', 'GDAL has nothing to warn about');
  t.match(info.stdout, /Geometry: Point/);
  t.match(info.stdout, new RegExp(`Feature Count: ${events.length}\\b`));
  t.match(info.stdout, /ID\["EPSG",4326\]/, 'EPSG:4326');
  t.match(info.stdout, /^eventTimestamp: DateTime/m);
  const features = await readWithGdal(file);
  const byId = new Map(features.map((feature) => [Number(feature.properties.id), feature]));
  t.same(
    [...byId.keys()].sort((a, b) => a - b),
    events.map((event) => event.id),
    'every event once (in the index’s order)',
  );
  t.ok(
    events.every((event) => {
      const feature = byId.get(event.id);
      const coordinates = feature?.geometry?.coordinates;
      const located =
        event.location === null
          ? coordinates === undefined
          : near(coordinates?.[0], event.location.longitude) &&
            near(coordinates?.[1], event.location.latitude);
      return (
        located &&
        (feature?.properties.title ?? null) === event.title &&
        Date.parse(String(feature?.properties.eventTimestamp)) === Date.parse(event.eventTimestamp)
      );
    }),
    'each with its location, title and time',
  );

  // A bounding box read through the index: exactly the located events inside it.
  const box = [13.3, 52.4, 13.5, 52.6];
  const inside = events
    .filter(
      ({ location: l }) =>
        l !== null &&
        l.longitude >= box[0]! &&
        l.longitude <= box[2]! &&
        l.latitude >= box[1]! &&
        l.latitude <= box[3]!,
    )
    .map((event) => event.id);
  t.ok(inside.length > 0 && inside.length < events.length, 'a box with some of the events');
  const read = await readWithGdal(file, ['-spat', ...box.map(String)]);
  t.same(
    read.map((feature) => Number(feature.properties.id)).sort((a, b) => a - b),
    inside,
    'GDAL reads a bounding box of it',
  );
});

t.test('GeoParquet: a kept file with its geo metadata, every event as hyparquet reads it', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadReadFixture(db.pool);
  const filter = { catalog: 'news', sort: 'id' };
  const events = (await getJson(app, '/api/v1/events', { ...filter, limit: '1000' })).body.events as Event[];
  const url = `/api/v1/events.parquet?${new URLSearchParams(filter)}`;
  const answer = await app.inject({ method: 'GET', url });
  t.equal(answer.statusCode, 200);
  t.equal(answer.headers['content-type'], 'application/vnd.apache.parquet');
  t.equal(answer.rawPayload.subarray(0, 4).toString('latin1'), 'PAR1');
  const bytes = answer.rawPayload;
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const metadata = parquetMetadata(file);
  const geo = JSON.parse(metadata.key_value_metadata?.find(({ key }) => key === 'geo')?.value ?? '{}');
  t.equal(geo.version, '1.1.0');
  t.equal(geo.primary_column, 'geometry');
  t.equal(geo.columns.geometry.encoding, 'WKB');
  t.same(geo.columns.geometry.geometry_types, ['Point']);
  t.notOk('crs' in geo.columns.geometry, 'no crs: OGC:CRS84');
  const located = events.flatMap((event) => (event.location ? [event.location] : []));
  t.same(
    geo.columns.geometry.bbox,
    [
      Math.min(...located.map((l) => l.longitude)),
      Math.min(...located.map((l) => l.latitude)),
      Math.max(...located.map((l) => l.longitude)),
      Math.max(...located.map((l) => l.latitude)),
    ],
    'the bbox of the located events',
  );
  const rows = await parquetReadObjects({ file });
  t.same(
    rows.map((row) => Number(row.id)),
    events.map((event) => event.id),
    'one row per event, in order',
  );
  t.ok(
    events.every((event, index) => {
      const row = rows[index] as Record<string, unknown>;
      const point = pointOf(row.geometry);
      const locatedRight =
        event.location === null
          ? point === null
          : near(point?.[0], event.location.longitude) && near(point?.[1], event.location.latitude);
      return (
        locatedRight &&
        (row.title ?? null) === event.title &&
        new Date(row.eventTimestamp as Date).getTime() === Date.parse(event.eventTimestamp)
      );
    }),
    'each with its location, title and time',
  );
});

t.test('an export of one dataset has its typed properties as typed columns in every format', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadQuakes(db.pool);
  const directory = t.testdir();
  const query = new URLSearchParams({ datasets: 'quakes', sort: 'id' });
  const geojson = await app.inject({ method: 'GET', url: `/api/v1/events.geojson?${query}` });
  const api = JSON.parse(geojson.payload).features as Array<{ properties: Record<string, unknown> }>;
  t.ok(api.length >= 4, 'the quakes');

  for (const format of ['fgb', 'gpkg', 'kml']) {
    const answer = await app.inject({ method: 'GET', url: `/api/v1/events.${format}?${query}` });
    t.equal(answer.statusCode, 200, format);
    const file = path.join(directory, `quakes.${format}`);
    writeFileSync(file, answer.rawPayload);
    const info = await run('ogrinfo', ['-ro', '-so', '-al', file]);
    t.match(info.stdout, /^mag: Real/m, `${format}: mag is a Real`);
    t.match(info.stdout, /^depth: Integer/m, `${format}: depth is an Integer`);
    t.match(info.stdout, /^felt: (Integer\(Boolean\)|Integer)/m, `${format}: felt`);
    t.match(info.stdout, /^data_title: String/m, `${format}: the colliding field under its prefixed name`);
    if (format !== 'kml') t.match(info.stdout, /^seen: DateTime/m, `${format}: seen is a DateTime`);
    const features = await readWithGdal(file);
    t.same(
      features.map((feature) => feature.properties.mag ?? null).sort(),
      api.map((feature) => feature.properties.mag ?? null).sort(),
      `${format}: the magnitudes the API sends`,
    );
  }

  const parquet = await app.inject({ method: 'GET', url: `/api/v1/events.parquet?${query}` });
  const bytes = parquet.rawPayload;
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const schema = parquetSchema(parquetMetadata(file));
  const types = Object.fromEntries(schema.children.map((child) => [child.element.name, child.element.type]));
  t.match(types, { mag: 'DOUBLE', depth: 'INT64', felt: 'BOOLEAN', seen: 'INT64', place: 'BYTE_ARRAY' });
  const rows = await parquetReadObjects({ file });
  t.same(
    rows.map((row) => row.mag ?? null),
    api.map((feature) => feature.properties.mag ?? null),
    'parquet: the magnitudes the API sends',
  );
});

t.test(
  'FlatGeobuf and GeoParquet take the same parameters and answer bad ones as the others do',
  async (t) => {
    const { app } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
    for (const format of ['fgb', 'parquet']) {
      const bad = await app.inject({ method: 'GET', url: `/api/v1/events.${format}?sort=data.x` });
      t.equal(bad.statusCode, 400, `${format}: a sort an export cannot walk`);
      t.match(bad.json(), { error: 'Bad Request' });
      const empty = await app.inject({ method: 'GET', url: `/api/v1/events.${format}` });
      t.equal(empty.statusCode, 200, `${format}: no events is an empty export`);
    }
    const empty = await app.inject({ method: 'GET', url: '/api/v1/events.fgb' });
    const file = path.join(t.testdir(), 'empty.fgb');
    writeFileSync(file, empty.rawPayload);
    t.match(
      (await run('ogrinfo', ['-ro', '-so', '-al', file])).stdout,
      /Feature Count: 0/,
      'GDAL reads an empty one',
    );
  },
);
