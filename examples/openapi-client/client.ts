// A typed Chronomap client generated from the served OpenAPI document (docs/api-v1.md, "A typed
// client from the OpenAPI document"): `schema.d.ts` comes from `openapi-typescript`, requests go
// through `openapi-fetch`. test/integration/service/openapi-client.test.ts copies this program next to a
// freshly generated schema.d.ts, type-checks both with `tsc --strict` and runs it against the app:
// it calls every /api/v1 operation and uploads a file, and prints what it got as JSON.
//
// Environment: CHRONOMAP_URL (the base URL), CHRONOMAP_TOKEN (a login token, for the upload),
// CHRONOMAP_CATALOG (the id of a catalog the token's user may upload into), CHRONOMAP_DATASET
// (the id of a dataset to infer the schema of).
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './schema.d.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const client = createClient<paths>({ baseUrl: env('CHRONOMAP_URL') });
// Which operations the program called (the test checks that every /api/v1 one was).
const called = new Set<string>();
const recordCalls: Middleware = {
  onRequest({ schemaPath, request }) {
    called.add(`${request.method} ${schemaPath}`);
  },
};
client.use(recordCalls);

/** The body of a 2xx answer, or a thrown error naming the operation and the status. */
function ok<T>(name: string, result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined || !result.response.ok) {
    throw new Error(`${name}: ${result.response.status} ${JSON.stringify(result.error)}`);
  }
  return result.data;
}

// `bounds` is a JSON-content parameter: openapi-typescript types it as the string it travels as.
const world = JSON.stringify({ north: 85, south: -85, east: 180, west: -180 });

const events = ok(
  'events',
  await client.GET('/api/v1/events', { params: { query: { limit: 5, sort: 'id', page: 1 } } }),
);
const firstEvent = events.events[0];
// One event with its provenance (a union told apart by `shown`).
const oneEvent = ok(
  'event',
  await client.GET('/api/v1/events/{id}', { params: { path: { id: firstEvent?.id ?? 1 } } }),
).event;
const provenanceShown = oneEvent.provenance.shown ? oneEvent.provenance.page : null;

const geo = ok(
  'geo',
  await client.GET('/api/v1/events/geo', { params: { query: { bounds: world, zoom: 2 } } }),
);
// The features are a union told apart by properties.type: TypeScript narrows on it.
let clustered = 0;
let points = 0;
for (const feature of geo.features) {
  const properties = feature.properties;
  if (properties.type === 'event-cluster') clustered += properties.count;
  else points += properties.title.length >= 0 ? 1 : 0;
}

const temporal = ok(
  'temporal',
  await client.GET('/api/v1/events/temporal', { params: { query: { granularity: 'month' } } }),
);
const byCatalog = ok(
  'stats',
  await client.GET('/api/v1/events/stats', { params: { query: { groupBy: 'catalog' } } }),
);
const sizes = ok(
  'geo stats',
  await client.GET('/api/v1/events/geo/stats', { params: { query: { zoom: 3 } } }),
);
const extent = ok(
  'bounds',
  await client.GET('/api/v1/events/bounds', { params: { query: { startDate: '2020-01-01' } } }),
);
const sourceStats = ok('sources stats', await client.GET('/api/v1/sources/stats'));
const dataSources = ok('data sources', await client.GET('/api/v1/data-sources'));
const changes = ok('changes', await client.GET('/api/v1/changes', { params: { query: { limit: 1000 } } }));
const inferred = ok(
  'schema infer',
  await client.GET('/api/v1/datasets/{id}/schema/infer', {
    params: { path: { id: Number(env('CHRONOMAP_DATASET')) }, query: { sampleSize: 50 } },
  }),
);

// Vector tiles: the TileJSON, then the world tile it points at, as bytes (Mapbox Vector Tile).
const tileJson = ok('tilejson', await client.GET('/api/v1/tiles.json'));
// The path is `{z}/{x}/{y}.mvt` with integer coordinates: the client writes `0/0/0.mvt`.
const worldTile = await client.GET('/api/v1/tiles/{z}/{x}/{y}.mvt', {
  params: { path: { z: 0, x: 0, y: 0 } },
  parseAs: 'arrayBuffer',
});
if (!worldTile.response.ok) throw new Error(`world tile: ${worldTile.response.status}`);

// Exports of the filtered events: GeoJSON (application/geo+json, typed as a FeatureCollection) and
// CSV (text/csv, a string).
const exported = ok('geojson export', await client.GET('/api/v1/events.geojson', { params: { query: {} } }));
const exportedDatasets = [...new Set(exported.features.map((feature) => feature.properties.dataset))].sort();
const csvExport = await client.GET('/api/v1/events.csv', { params: { query: {} }, parseAs: 'text' });
if (!csvExport.response.ok) throw new Error(`csv export: ${csvExport.response.status}`);
const csvText: string = csvExport.data ?? '';
const csvRows = csvText.trimEnd().split('\n').length - 1;
// The same events as GeoJSON text sequences (one feature per record) and KML.
const sequence = await client.GET('/api/v1/events.geojsonseq', { params: { query: {} }, parseAs: 'text' });
if (!sequence.response.ok) throw new Error(`geojsonseq export: ${sequence.response.status}`);
const sequenceRecords = String(sequence.data).split('\x1e').length - 1;
const kmlExport = await client.GET('/api/v1/events.kml', { params: { query: {} }, parseAs: 'text' });
if (!kmlExport.response.ok) throw new Error(`kml export: ${kmlExport.response.status}`);
const placemarks = String(kmlExport.data).split('<Placemark').length - 1;
// A GeoPackage (SQLite) file, as bytes.
const geopackage = await client.GET('/api/v1/events.gpkg', { params: { query: {} }, parseAs: 'arrayBuffer' });
if (!geopackage.response.ok) throw new Error(`gpkg export: ${geopackage.response.status}`);
const geopackageHeader = new TextDecoder().decode(new Uint8Array(geopackage.data as ArrayBuffer).subarray(0, 15));
// FlatGeobuf and GeoParquet files, as bytes: their magic numbers.
const flatgeobuf = await client.GET('/api/v1/events.fgb', { params: { query: {} }, parseAs: 'arrayBuffer' });
if (!flatgeobuf.response.ok) throw new Error(`fgb export: ${flatgeobuf.response.status}`);
const flatgeobufMagic = new TextDecoder().decode(new Uint8Array(flatgeobuf.data as ArrayBuffer).subarray(0, 3));
const parquet = await client.GET('/api/v1/events.parquet', { params: { query: {} }, parseAs: 'arrayBuffer' });
if (!parquet.response.ok) throw new Error(`parquet export: ${parquet.response.status}`);
const parquetMagic = new TextDecoder().decode(new Uint8Array(parquet.data as ArrayBuffer).subarray(0, 4));
// A PMTiles archive of a small view (the whole set's tile pyramid is thousands of tile statements).
const pmtiles = await client.GET('/api/v1/events.pmtiles', {
  params: { query: { datasets: ['fires'], startDate: '2023-01-01', endDate: '2023-02-28' } },
  parseAs: 'arrayBuffer',
});
if (!pmtiles.response.ok) throw new Error(`pmtiles export: ${pmtiles.response.status}`);
const pmtilesMagic = new TextDecoder().decode(new Uint8Array(pmtiles.data as ArrayBuffer).subarray(0, 7));
// A background export's status (the Location of a large first export's 202; this set is small):
// an export that is not the caller's, or does not exist, is a 404.
const unknownExport = await client.GET('/api/v1/exports/{id}', {
  params: { path: { id: '00000000-0000-4000-8000-000000000000' } },
});
if (unknownExport.response.status !== 404) throw new Error(`export status: ${unknownExport.response.status}`);

// The collections' `where` (a deepObject parameter): Payload's brackets, two levels deep, written
// by a serializer of our own (openapi-fetch's default writes one level).
function bracketed(query: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(query).flatMap(([key, value]) => {
    const name = prefix ? `${prefix}[${key}]` : key;
    return value !== null && typeof value === 'object'
      ? bracketed(value as Record<string, unknown>, name)
      : [`${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`];
  });
}
const afterFirst = ok(
  'events after the first',
  await client.GET('/api/events', {
    params: { query: { where: { id: { greater_than: firstEvent?.id ?? 0 } }, limit: 1 } },
    querySerializer: (query) => bracketed(query).join('&'),
  }),
);

// An upload: multipart/form-data with the file as a Blob, as a logged-in user.
const csv = 'title,date,latitude,longitude\nA,2024-01-02,52.5,13.4\nB,2024-01-03,48.85,2.35\n';
const uploaded = ok(
  'upload',
  await client.POST('/api/ingest-files', {
    headers: { Authorization: `Bearer ${env('CHRONOMAP_TOKEN')}` },
    body: { file: csv, catalog: env('CHRONOMAP_CATALOG') },
    bodySerializer(body) {
      const form = new FormData();
      form.append('file', new Blob([body.file], { type: 'text/csv' }), 'typed-client.csv');
      form.append('catalog', body.catalog);
      return form;
    },
  }),
);

// A 400 comes back typed as the error body.
const refused = await client.GET('/api/v1/events', { params: { query: { limit: 1001 } } });

process.stdout.write(
  `${JSON.stringify({
    called: [...called].sort(),
    events: { totalDocs: events.pagination.totalDocs, count: events.events.length, firstId: firstEvent?.id ?? null },
    event: { id: oneEvent.id, provenancePage: provenanceShown },
    geo: { clustered, points, capped: geo.capped },
    temporal: { total: temporal.metadata.total, buckets: temporal.histogram.length },
    stats: { total: byCatalog.total, groupedBy: byCatalog.groupedBy },
    geoStats: sizes.p100,
    bounds: { count: extent.count, located: extent.located, hasBox: extent.bounds !== null },
    sources: sourceStats.totalEvents,
    changes: { count: changes.changes.length, next: typeof changes.nextCursor },
    dataSources: dataSources.catalogs.map((catalog) => catalog.slug).sort(),
    inferred: { dataset: inferred.dataset.id, fields: inferred.fields.length },
    exports: {
      type: exported.type,
      features: exported.features.length,
      datasets: exportedDatasets,
      csvRows,
      sequenceRecords,
      placemarks,
      geopackageHeader,
      flatgeobufMagic,
      parquetMagic,
      pmtilesMagic,
    },
    where: { totalDocs: afterFirst.totalDocs, firstId: afterFirst.docs[0]?.id ?? null },
    tiles: {
      tilejson: tileJson.tilejson,
      status: worldTile.response.status,
      type: worldTile.response.headers.get('content-type'),
    },
    // A 201 is an import (`doc`) or, for `start=false`, a draft waiting for its configuration.
    upload:
      'doc' in uploaded
        ? { status: uploaded.doc.status, catalog: uploaded.doc.catalog, message: uploaded.message }
        : { draft: uploaded.draft.id },
    refused: { status: refused.response.status, error: refused.error?.error ?? null },
  })}\n`,
);
