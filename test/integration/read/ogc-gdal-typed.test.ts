import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import t from 'tap';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { loadQuakes } from '../../helpers/ogc-quakes.ts';

// Typed properties and CQL2 read by GDAL (Debian's gdal-bin, 3.6): ogrinfo over OAPIF must see `mag`
// as Real (and the other fields with their types) with the values the API sends, also when the
// first page holds only whole magnitudes. GDAL 3.6's OAPIF driver does not send `filter` (it reads
// neither /conformance nor /queryables: a -where is evaluated by GDAL over the pages), so the
// server-side filter is read through GDAL's GeoJSON driver from an items URL that carries it.

const run = promisify(execFile);

async function ogrinfo(args: string[]): Promise<string> {
  // Asynchronous: the app answering GDAL runs in this same process.
  const { stdout } = await run('ogrinfo', args, {
    timeout: 60_000,
    env: { ...process.env, GDAL_HTTP_TIMEOUT: '30', CPL_CURL_VERBOSE: 'NO' },
  });
  return stdout;
}

t.test('GDAL reads typed properties and a CQL2-filtered page', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const [alpha, , gamma, , delta] = await loadQuakes(db.pool);
  const answered: Array<{ url: string; status: number }> = [];
  app.addHook('onResponse', async (request, reply) => {
    answered.push({ url: request.url, status: reply.statusCode });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const source = `OAPIF:http://127.0.0.1:${port}/ogc`;

  const summary = await ogrinfo(['-ro', '-so', source, 'quakes']);
  t.match(summary, /^mag: Real/m, 'mag is a Real');
  t.match(summary, /^depth: Integer /m);
  t.match(summary, /^felt: Integer\(Boolean\)/m);
  t.match(summary, /^seen: DateTime/m);
  t.match(summary, /^data_title: String/m, 'the colliding field under its prefixed name');

  // A page whose only magnitude is whole (Delta's 6): still a Real, not an Integer.
  const whole = `http://127.0.0.1:${port}/ogc/collections/quakes/items?${new URLSearchParams({ filter: 'mag = 6' })}`;
  t.match(
    await ogrinfo(['-ro', '-so', `GeoJSON:${whole}`, 'OGRGeoJSON']),
    /^mag: Real/m,
    'a page of whole magnitudes reads as Real',
  );

  const one = await ogrinfo(['-ro', '-q', source, 'quakes', '-fid', String(gamma)]);
  const api = (await app.inject({ method: 'GET', url: `/ogc/collections/quakes/items/${gamma}` })).json();
  t.equal(api.properties.mag, 3);
  t.match(one, /mag \(Real\) = 3\n/, 'the value GDAL reads is the API’s');
  t.match(one, /felt \(Integer\(Boolean\)\) = 1\n/);

  const where = await ogrinfo(['-ro', '-q', source, 'quakes', '-where', 'mag > 3']);
  const fids = [...where.matchAll(/OGRFeature\(quakes\):(\d+)/g)].map((match) => Number(match[1]));
  t.same(fids, [alpha, delta], '-where selects what the CQL2 filter selects');

  const filtered = `http://127.0.0.1:${port}/ogc/collections/quakes/items?${new URLSearchParams({
    filter: "mag > 3 AND S_INTERSECTS(geometry, BBOX(0, 30, 150, 60)) AND place <> 'Rome'",
  })}`;
  const read = await ogrinfo(['-ro', '-so', `GeoJSON:${filtered}`, 'OGRGeoJSON']);
  t.match(read, /Feature Count: 1\n/, 'the server-side filter selects Delta alone');
  t.match(read, /^mag: Real/m);
  t.same(
    answered.filter((entry) => entry.status >= 400),
    [],
    'GDAL got no error on any request',
  );
});
