import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parquetReadObjects } from 'hyparquet';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// Provenance (issue 38 §5) in the file exports the way /api/v1/events and the GeoJSON export carry
// it: GeoPackage, FlatGeobuf and KML read back by GDAL, GeoParquet by hyparquet; each event's
// `provenance` is the list's object, and a dataset whose owner hides it says `{"shown":false}` in
// every format at once (hiding it is a new data version: no kept file keeps the old provenance).

const run = promisify(execFile);

type Listed = { id: number; provenance: Record<string, unknown> };

/**
 * Each feature's provenance as GDAL reads `file`, in the file's order, with its id where the format
 * has one (FlatGeobuf's `id` column, GeoPackage's fid; KML has none: null).
 */
async function gdalProvenance(file: string): Promise<Array<[number | null, unknown]>> {
  const { stdout } = await run('ogr2ogr', ['-preserve_fid', '-f', 'GeoJSON', '/vsistdout/', file], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const features = JSON.parse(stdout).features as Array<{ id?: number; properties: Record<string, unknown> }>;
  return features.map((feature) => {
    const { id, provenance } = feature.properties;
    const text = typeof provenance === 'string' ? provenance : JSON.stringify(provenance);
    const known = id ?? feature.id;
    return [known === undefined ? null : Number(known), JSON.parse(text) as unknown];
  });
}

t.test('every file format carries each event’s provenance, hidden where its dataset hides it', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  const filter = { catalog: 'news', sort: 'id' };
  const dir = t.testdir();

  async function formats(round: string): Promise<Record<string, Map<number, unknown>>> {
    const read: Record<string, Map<number, unknown>> = {};
    for (const format of ['gpkg', 'fgb', 'parquet', 'kml']) {
      const answer = await app.inject({
        method: 'GET',
        url: `/api/v1/events.${format}?${new URLSearchParams(filter)}`,
      });
      t.equal(answer.statusCode, 200, `${format} ${round}`);
      const file = path.join(dir, `${round}.${format}`);
      writeFileSync(file, answer.rawPayload);
      if (format === 'parquet') {
        const rows = (await parquetReadObjects({ file: new Uint8Array(answer.rawPayload).buffer })) as Array<{
          id: bigint;
          provenance: string | null;
        }>;
        read[format] = new Map(rows.map((r) => [Number(r.id), JSON.parse(String(r.provenance)) as unknown]));
      } else if (format === 'kml') {
        // GDAL's KML driver reads Placemarks without their ids: the order is the export's (by id).
        const ids = [...answer.body.matchAll(/<Placemark id="event-(\d+)"/g)].map((m) => Number(m[1]));
        const values = (await gdalProvenance(file)).map(([, provenance]) => provenance);
        t.equal(values.length, ids.length, 'GDAL reads every Placemark');
        read[format] = new Map(ids.map((id, index) => [id, values[index]]));
      } else {
        read[format] = new Map(
          (await gdalProvenance(file)).map(([id, provenance]) => [Number(id), provenance]),
        );
      }
    }
    return read;
  }

  const listed = (await getJson(app, '/api/v1/events', { ...filter, limit: '1000' })).body.events as Listed[];
  t.ok(listed.length > 10, 'a filter with events');
  t.ok(
    listed.every((event) => event.provenance.shown === true),
    'the fixture’s datasets show their provenance',
  );
  const expected = new Map(listed.map((event) => [event.id, event.provenance]));
  for (const [format, read] of Object.entries(await formats('shown')))
    t.same(read, expected, `${format}: each event's provenance, as /api/v1/events gives it`);

  // The owner of one dataset hides it: every format says so for its events, the rest unchanged.
  await db.pool.query(sql.unsafe`update datasets set provenance_public = false where slug = 'fires'`);
  const after = (await getJson(app, '/api/v1/events', { ...filter, limit: '1000' })).body.events as Array<
    Listed & { dataset: { id: number } }
  >;
  const hidden = after.filter((event) => event.dataset.id === fixture.datasetIds.fires);
  t.ok(hidden.length > 0 && hidden.length < after.length, 'some events of the view are in that dataset');
  t.ok(hidden.every((event) => JSON.stringify(event.provenance) === '{"shown":false}'));
  const expectedAfter = new Map(after.map((event) => [event.id, event.provenance]));
  for (const [format, read] of Object.entries(await formats('hidden')))
    t.same(read, expectedAfter, `${format}: hidden for that dataset's events, not a kept file of before`);
});
