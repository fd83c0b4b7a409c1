import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// OGC API – Features read by a real client: GDAL's OAPIF driver (Debian's gdal-bin, installed by
// scripts/install-system-packages) against the app on a loopback port. ogrinfo must list one layer
// per dataset with the feature counts of /api/v1/events; ogr2ogr copies a filtered collection (a
// bbox and a datetime interval, through several pages of next links) to a GeoPackage whose row
// count must equal /api/v1/events' totalDocs for the same filters.

const run = promisify(execFile);

async function gdal(command: string, args: string[]): Promise<string> {
  // Asynchronous: the app answering GDAL runs in this same process.
  const { stdout } = await run(command, args, {
    timeout: 60_000,
    maxBuffer: 16 * 1024 * 1024,
    env: { ...process.env, GDAL_HTTP_TIMEOUT: '30', CPL_CURL_VERBOSE: 'NO' },
  });
  return stdout;
}

t.test('GDAL reads /ogc: layers, counts and a filtered copy to a GeoPackage', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadReadFixture(db.pool);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const source = `OAPIF:http://127.0.0.1:${port}/ogc`;
  const totalDocs = async (params: Record<string, string>) => {
    const { status, body } = await getJson(app, '/api/v1/events', { ...params, limit: '1' });
    t.equal(status, 200);
    return body.pagination.totalDocs as number;
  };

  const layers = await gdal('ogrinfo', ['-ro', '-q', source]);
  const names = [...layers.matchAll(/^\d+: ([a-z0-9-]+)/gm)].map((match) => match[1]).sort();
  t.same(names, ['exhibitions', 'fires', 'protests'], 'one layer per public dataset');

  for (const dataset of names) {
    if (!dataset) continue;
    const summary = await gdal('ogrinfo', ['-ro', '-so', source, dataset]);
    const count = Number(/Feature Count: (\d+)/.exec(summary)?.[1]);
    t.equal(
      count,
      await totalDocs({ datasets: dataset }),
      `${dataset}: ogrinfo's feature count is totalDocs`,
    );
    t.match(summary, /eventTimestamp: DateTime/, `${dataset}: eventTimestamp is read as a date-time`);
  }

  // A half-bounded interval: the WHERE becomes datetime=2024-01-01T00:00:00Z/.. on the server.
  const since = await gdal('ogrinfo', [
    '-ro',
    '-so',
    source,
    'fires',
    '-oo',
    'PAGE_SIZE=100',
    '-where',
    "eventTimestamp >= '2024-01-01T00:00:00'",
  ]);
  t.equal(
    Number(/Feature Count: (\d+)/.exec(since)?.[1]),
    await totalDocs({ datasets: 'fires', startDate: '2024-01-01T00:00:00Z' }),
    'an open interval counts as startDate alone',
  );

  // One feature by id: GDAL asks items/{featureId} (its ids are the event ids).
  const { body: page } = await getJson(app, '/ogc/collections/fires/items', { limit: '1' });
  const id = page.features[0].id as number;
  const one = await gdal('ogrinfo', ['-ro', '-q', source, 'fires', '-fid', String(id)]);
  t.match(one, new RegExp(`OGRFeature\\(fires\\):${id}\\n`), 'ogrinfo -fid reads the event');
  t.match(one, /dataset \(String\) = fires/);

  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-ogc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const gpkg = path.join(dir, 'out.gpkg');
  // A box over Europe and a datetime interval: GDAL sends them as bbox and datetime, and follows
  // the next links page by page (PAGE_SIZE 20, well below the result).
  await gdal('ogr2ogr', [
    '-f',
    'GPKG',
    gpkg,
    source,
    'protests',
    '-oo',
    'PAGE_SIZE=20',
    '-spat',
    '-20',
    '30',
    '40',
    '70',
    '-where',
    "eventTimestamp >= '2023-04-01T00:00:00' AND eventTimestamp <= '2024-09-30T23:59:59'",
  ]);
  const counted = await gdal('ogrinfo', ['-ro', '-q', gpkg, '-sql', 'select count(*) as n from protests']);
  const rows = Number(/n \(\w+\) = (\d+)/.exec(counted)?.[1]);
  const expected = await totalDocs({
    datasets: 'protests',
    bounds: JSON.stringify({ west: -20, south: 30, east: 40, north: 70 }),
    startDate: '2023-04-01T00:00:00Z',
    endDate: '2024-09-30T23:59:59Z',
  });
  t.ok(expected > 20, `the filtered set (${expected}) spans several pages`);
  t.equal(rows, expected, 'the GeoPackage holds exactly the filtered events');
});
