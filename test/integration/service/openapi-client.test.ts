import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';
import { ingestApp } from '../../fixtures/ingest/client.ts';

// The OpenAPI document is good enough for a client generator: a typed client is generated from the
// document the app serves (openapi-typescript), type-checked strictly with the small program of
// examples/openapi-client/client.ts (openapi-fetch), and that program is run with Node 24 against
// the app on a loopback port. It calls every /api/v1 operation and an upload; the answers are
// checked here. These are the commands docs/api-v1.md gives.

const run = promisify(execFile);
const bin = (name: string) => path.join(projectRoot, 'node_modules', '.bin', name);

t.test(
  'a client generated from the served document type-checks and calls every /api/v1 operation',
  async (t) => {
    const { app, db, catalogId, user } = await ingestApp(t, {}, false, {
      quotasFile: policyFile(t, unlimitedAnonymousReads),
    });
    const fixture = await loadReadFixture(db.pool);
    await app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

    const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-openapi-client-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    symlinkSync(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
    copyFileSync(
      path.join(projectRoot, 'examples', 'openapi-client', 'client.ts'),
      path.join(dir, 'client.ts'),
    );
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));

    await run(bin('openapi-typescript'), [`${base}/api/openapi.json`, '-o', path.join(dir, 'schema.d.ts')]);
    // Strict, and nothing skipped: the generated declarations are checked too.
    await run(
      bin('tsc'),
      [
        '--strict',
        '--noEmit',
        '--target',
        'es2023',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--allowImportingTsExtensions',
        '--types',
        'node',
        '--noUncheckedIndexedAccess',
        'client.ts',
        'schema.d.ts',
      ],
      { cwd: dir },
    ).catch((error: { stdout?: string }) => {
      throw new Error(`tsc --strict failed:\n${error.stdout ?? String(error)}`);
    });

    const inferDataset = fixture.datasetIds.exhibitions ?? 0;
    const { stdout } = await run(bin('node'), ['client.ts'], {
      cwd: dir,
      env: {
        ...process.env,
        NODE_OPTIONS: '--disable-warning=ExperimentalWarning',
        CHRONOMAP_URL: base,
        CHRONOMAP_TOKEN: user.token,
        CHRONOMAP_CATALOG: String(catalogId),
        CHRONOMAP_DATASET: String(inferDataset),
      },
    });
    const result = JSON.parse(stdout);

    const document = (await app.inject({ url: '/api/openapi.json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const v1Operations = Object.entries(document.paths)
      .filter(([url]) => url.startsWith('/api/v1/'))
      .flatMap(([url, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${url}`))
      .sort();
    t.ok(v1Operations.length >= 9, 'the read API is in the document');
    // A new /api/v1 route fails here until examples/openapi-client/client.ts calls it (typed).
    const uncalled = v1Operations.filter((operation) => !result.called.includes(operation));
    t.same(uncalled, [], `add typed calls to examples/openapi-client/client.ts for: ${uncalled.join(', ')}`);
    t.ok(result.called.includes('POST /api/ingest-files'), 'uploaded');

    const total = fixture.events.length;
    const located = fixture.events.filter((event) => event.longitude !== null).length;
    t.same(result.events, {
      totalDocs: total,
      count: 5,
      firstId: Math.min(...fixture.events.map((e) => e.id)),
    });
    const oneId = Math.min(...fixture.events.map((e) => e.id));
    t.same(result.event, { id: oneId, provenancePage: `/events/${oneId}/provenance` }, 'one event');
    t.equal(result.temporal.total, total, 'the histogram counts every event');
    t.same(result.stats, { total, groupedBy: 'catalog' });
    t.equal(result.sources, total);
    t.same(result.changes, { count: total, next: 'string' }, 'the change feed gives every creation');
    t.same(result.dataSources, ['news', 'science']);
    const inView = await app.inject({
      url: `/api/v1/events?limit=1&bounds=${encodeURIComponent('{"north":85,"south":-85,"east":180,"west":-180}')}`,
    });
    t.equal(
      result.geo.clustered + result.geo.points,
      inView.json().pagination.totalDocs,
      'the map features, told apart by properties.type, count every event in the view',
    );
    t.ok(result.geoStats >= 1, 'cluster sizes');
    const since2020 = fixture.events.filter((event) => event.eventTimestamp >= '2020-01-01').length;
    t.equal(result.bounds.count, since2020);
    t.ok(result.bounds.located <= located && result.bounds.hasBox);
    t.same(result.inferred.dataset, inferDataset);
    t.ok(result.inferred.fields > 0, 'fields inferred');
    const geojson = (await app.inject({ url: '/api/v1/events.geojson' })).json() as {
      features: { properties: { dataset: string } }[];
    };
    const datasetSlugs = [...new Set(geojson.features.map((feature) => feature.properties.dataset))].sort();
    t.same(
      result.exports,
      {
        type: 'FeatureCollection',
        features: total,
        datasets: datasetSlugs,
        csvRows: total,
        sequenceRecords: total,
        placemarks: total,
        geopackageHeader: 'SQLite format 3',
        flatgeobufMagic: 'fgb',
        parquetMagic: 'PAR1',
        pmtilesMagic: 'PMTiles',
      },
      'the exports hold every visible event (the fixture has no newline inside a cell); the GeoJSON is typed',
    );
    const firstId = Math.min(...fixture.events.map((e) => e.id));
    const afterFirst = await app.inject({ url: `/api/events?where[id][greater_than]=${firstId}&limit=1` });
    t.equal(afterFirst.statusCode, 200);
    t.same(
      result.where,
      { totalDocs: afterFirst.json().totalDocs, firstId: afterFirst.json().docs[0]?.id ?? null },
      'the typed `where` reaches the collection as where[id][greater_than]',
    );
    t.ok(result.where.totalDocs > 0 && result.where.firstId > firstId, 'the filter kept the later events');
    t.same(
      result.tiles,
      {
        tilejson: '3.0.0',
        status: located > 0 ? 200 : 204,
        type: located > 0 ? 'application/vnd.mapbox-vector-tile' : null,
      },
      'the TileJSON and the world tile it describes',
    );
    t.same(result.upload, { status: 'pending', catalog: catalogId, message: 'Ingest file created' });
    t.same(result.refused, { status: 400, error: 'Bad Request' });
  },
);
