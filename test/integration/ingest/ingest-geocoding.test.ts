import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { pgBossIngestQueue } from '../../../src/adapters/jobs/ingest-worker.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresIngestStore } from '../../../src/adapters/postgres/ingest/ingest-store.ts';
import { createIngestFile } from '../../../src/application/ingest/create-ingest-file.ts';
import { parseIngestSettings } from '../../../src/domain/ingest/settings.ts';
import { unlimitedQuotas } from '../../helpers/quotas.ts';
import {
  authHeaders,
  ingestApp,
  jobRow,
  preview,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../../fixtures/ingest/client.ts';

// Geocoding through the offline gazetteer and through a Nominatim-compatible HTTP server on
// loopback that answers well, slowly, with errors or with garbage.

const CSV = [
  'time,place,title',
  '2026-01-01T00:00:00Z,Berlin,a',
  '2026-01-02T00:00:00Z,Paris,b',
  '2026-01-03T00:00:00Z,Berlin,c',
  '2026-01-04T00:00:00Z,Qwxzzy Nowhere,d',
].join('\n');

const Located = row(Type.Object({ title: Type.String(), lat: Type.Union([Type.Number(), Type.Null()]) }));

type Behaviour = (query: string, request: number) => { status: number; body: string } | 'hang';

async function fakeNominatim(t: Test, behaviour: Behaviour) {
  const queries: string[] = [];
  const server = http.createServer((request, response) => {
    const query = new URL(request.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    queries.push(query);
    const answer = behaviour(query, queries.length);
    if (answer === 'hang') return;
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, queries };
}

const place = (lat: number, lon: number, importance: number) =>
  JSON.stringify([{ lat: String(lat), lon: String(lon), importance }]);

const nominatimApp = (t: Test, url: string) =>
  ingestApp(t, {
    geocoder: { kind: 'nominatim', url, requestsPerSecond: 200, timeoutMs: 300, minConfidence: 0.5 },
  });

t.test('the offline gazetteer locates rows by their place names', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const doc = (
    (await upload(app, catalogId, { name: 'places.csv', content: CSV })).json() as { doc: UploadedDoc }
  ).doc;
  const progress = await waitForFile(app, doc.id);
  t.equal(progress.status, 'completed');
  const geocode = progress.jobs[0]?.stages.find((s) => s.name === 'geocode-batch');
  t.equal(geocode?.status, 'completed');
  t.equal(progress.jobs[0]?.results?.geocoded, 3);
  const rows = await db.pool.any(
    sql.type(Located)`select title, round(st_y(location))::float8 as lat from events order by title`,
  );
  t.same(rows, [
    { title: 'a', lat: 53 },
    { title: 'b', lat: 49 },
    { title: 'c', lat: 53 },
    { title: 'd', lat: null },
  ]);
});

// Issue 20's European cities, with separate city/region/country columns, one ambiguous name, one
// unknown place and one row with coordinates of its own.
const COLUMNS_CSV = [
  'time,title,city,region,country,latitude,longitude',
  '2026-01-01T00:00:00Z,cologne,Cologne,,Germany,,',
  '2026-01-02T00:00:00Z,seville,Seville,Andalusia,Spain,,',
  '2026-01-03T00:00:00Z,munich,München,Bayern,DE,,',
  '2026-01-04T00:00:00Z,springfield,Springfield,,US,,',
  '2026-01-05T00:00:00Z,nowhere,Qwxzzy,,Germany,,',
  '2026-01-06T00:00:00Z,own,Cologne,,Germany,10.5,20.5',
].join('\n');

type ListedEvent = {
  data: { title: string };
  location: { latitude: number; longitude: number } | null;
  locatedBy: Record<string, unknown> | null;
};

t.test('an address from several columns; each event says how it was located', async (t) => {
  const { app, catalogId } = await ingestApp(t);
  const proposed = (await preview(app, { name: 'cities.csv', content: COLUMNS_CSV })).json() as {
    sheets: { mapping: Record<string, unknown>; addressProposal?: unknown }[];
  };
  t.match(proposed.sheets[0], {
    mapping: { address: 'city' },
    addressProposal: {
      fieldMapping: { address: ['city', 'region', 'country'] },
      example: 'Cologne, Germany',
    },
  });
  const settings = JSON.stringify({ fieldMapping: { address: ['city', 'region', 'country'] } });
  const doc = (
    (await upload(app, catalogId, { name: 'cities.csv', content: COLUMNS_CSV }, { settings })).json() as {
      doc: UploadedDoc;
    }
  ).doc;
  const progress = await waitForFile(app, doc.id);
  t.equal(progress.status, 'completed');
  t.match(progress.jobs[0]?.results, {
    created: 6,
    geocoded: 3,
    geocoding: { addresses: 5, located: 3, notFound: 1, lowConfidence: 1 },
  });
  const answer = await app.inject({ method: 'GET', url: '/api/v1/events?limit=10&sort=eventTimestamp' });
  t.equal(answer.statusCode, 200);
  const listed = answer.json() as { events: ListedEvent[] };
  const byTitle = new Map(listed.events.map((e) => [e.data.title, e]));
  t.match(byTitle.get('cologne'), {
    location: { latitude: 50.93333 },
    locatedBy: {
      method: 'geocoded',
      address: 'Cologne, Germany',
      provider: 'offline-geonames',
      matchedName: 'Köln',
      matchedCountry: 'DE',
      confidence: Number,
    },
  });
  t.match(byTitle.get('seville')?.locatedBy, { matchedName: 'Sevilla', matchedCountry: 'ES' });
  t.match(byTitle.get('munich')?.locatedBy, { matchedName: 'Munich', matchedRegion: 'Bavaria' });
  t.same(byTitle.get('springfield'), { ...byTitle.get('springfield'), location: null, locatedBy: null });
  t.same(byTitle.get('nowhere')?.locatedBy, null);
  t.same(byTitle.get('own')?.locatedBy, { method: 'coordinates' });
});

t.test('a template address; the low-confidence threshold is configurable', async (t) => {
  // A threshold above what the offline gazetteer ever answers refuses every place as low confidence.
  const { app, catalogId } = await ingestApp(t, { geocoder: { kind: 'offline', minConfidence: 0.99 } });
  const settings = JSON.stringify({ fieldMapping: { address: '{city}, {country}' } });
  const doc = (
    (await upload(app, catalogId, { name: 'cities.csv', content: COLUMNS_CSV }, { settings })).json() as {
      doc: UploadedDoc;
    }
  ).doc;
  const progress = await waitForFile(app, doc.id);
  t.match(progress.jobs[0]?.results, {
    geocoded: 0,
    geocoding: { addresses: 5, located: 0, notFound: 1, lowConfidence: 4 },
  });
});

t.test(
  'an automated import whose places are mostly ambiguous or unknown waits in needs-review',
  async (t) => {
    const setup = await ingestApp(t);
    const csv = [
      'time,title,city,country',
      '2026-01-01T00:00:00Z,a,Springfield,US',
      '2026-01-02T00:00:00Z,b,Qwxzzy,Germany',
      '2026-01-03T00:00:00Z,c,Cologne,Germany',
    ].join('\n');
    const relative = `auto-${Math.random().toString(36).slice(2)}.csv`;
    mkdirSync(path.join(setup.dataDir, 'ingest'), { recursive: true });
    writeFileSync(path.join(setup.dataDir, 'ingest', relative), csv);
    const created = await createIngestFile(
      {
        store: postgresIngestStore(setup.db.pool),
        queue: pgBossIngestQueue(setup.services.boss),
        quotas: unlimitedQuotas,
      },
      {
        originalName: 'feed.csv',
        storedPath: relative,
        sizeBytes: csv.length,
        mimeType: 'text/csv',
        format: 'csv',
        source: 'scheduled',
        catalogId: setup.catalogId,
        userId: null,
        settings: parseIngestSettings({ fieldMapping: { address: ['city', 'country'] } }, 'new'),
        sheets: ['only'],
      },
    );
    const review = await waitForFile(setup.app, created.file.id);
    t.equal(
      review.status,
      'needs-review',
      'a low-confidence place counts as a failure, as a missing one does',
    );
    t.match(review.jobs[0]?.schemaValidation, {
      requiresApproval: true,
      reasons: ['geocoding failure rate 67% over 30%: 2 of 3 addresses not located'],
    });
  },
);

t.test('geocoding off: rows without coordinates are stored without a location', async (t) => {
  const { app, catalogId } = await ingestApp(t);
  const response = await upload(
    app,
    catalogId,
    { name: 'places.csv', content: CSV },
    { settings: JSON.stringify({ geocoding: false }) },
  );
  const progress = await waitForFile(app, (response.json() as { doc: UploadedDoc }).doc.id);
  t.equal(progress.jobs[0]?.stages.find((s) => s.name === 'geocode-batch')?.status, 'skipped');
  t.equal(progress.jobs[0]?.results?.created, 4);
});

t.test(
  'Nominatim: each distinct address asked once and cached; (0,0) and low confidence are failures',
  async (t) => {
    const server = await fakeNominatim(t, (query) => {
      if (query === 'Berlin') return { status: 200, body: place(52.52, 13.4, 0.8) };
      if (query === 'Paris') return { status: 200, body: place(0, 0, 0.9) };
      return { status: 200, body: place(10, 10, 0.1) };
    });
    const { app, db, catalogId } = await nominatimApp(t, server.url);
    const doc = (
      (await upload(app, catalogId, { name: 'places.csv', content: CSV })).json() as { doc: UploadedDoc }
    ).doc;
    const progress = await waitForFile(app, doc.id);
    t.equal(progress.status, 'completed');
    t.same([...server.queries].sort(), ['Berlin', 'Paris', 'Qwxzzy Nowhere']);
    t.equal(progress.jobs[0]?.results?.geocoded, 2, 'only the two Berlin rows');
    const failures = await db.pool.any(
      sql.type(row(Type.Object({ query: Type.String(), failure: Type.Union([Type.String(), Type.Null()]) })))`
      select query, failure from geocode_cache order by query`,
    );
    t.same(failures, [
      { query: 'Berlin', failure: null },
      { query: 'Paris', failure: 'resolved to (0,0)' },
      { query: 'Qwxzzy Nowhere', failure: 'low confidence (0.1)' },
    ]);
    const again = (
      (await upload(app, catalogId, { name: 'again.csv', content: CSV })).json() as { doc: UploadedDoc }
    ).doc;
    await waitForFile(app, again.id);
    t.equal(server.queries.length, 3, 'the second import is answered from the cache');
  },
);

t.test('Nominatim answering 429 then 500: the stage is retried and completes', async (t) => {
  const server = await fakeNominatim(t, (_query, n) =>
    n === 1
      ? { status: 429, body: '{}' }
      : n === 2
        ? { status: 500, body: 'oops' }
        : { status: 200, body: place(1, 1, 0.9) },
  );
  const { app, catalogId } = await nominatimApp(t, server.url);
  const doc = (
    (await upload(app, catalogId, { name: 'places.csv', content: CSV })).json() as { doc: UploadedDoc }
  ).doc;
  const progress = await waitForFile(app, doc.id);
  t.equal(progress.status, 'completed');
  const job = await jobRow(app, doc.jobs[0]?.id as number);
  t.equal(job.retryAttempts, 2, 'two automatic retries');
  t.equal(progress.jobs[0]?.results?.geocoded, 4);
});

for (const [label, behaviour, pattern] of [
  ['garbage', () => ({ status: 200, body: '<html>not json</html>' }), /not JSON/],
  ['a timeout', () => 'hang' as const, /did not answer within 300 ms/],
] as [string, Behaviour, RegExp][]) {
  t.test(
    `Nominatim answering ${label}: retried ${3} times, then failed as recoverable with max_retries_exceeded`,
    async (t) => {
      const server = await fakeNominatim(t, behaviour);
      const { app, db, catalogId } = await nominatimApp(t, server.url);
      const doc = (
        (await upload(app, catalogId, { name: 'places.csv', content: CSV })).json() as { doc: UploadedDoc }
      ).doc;
      const progress = await waitForFile(app, doc.id);
      t.equal(progress.status, 'failed');
      const job = await jobRow(app, doc.jobs[0]?.id as number);
      t.equal(job.retryAttempts, 3);
      t.match(job.errorLog, { lastError: pattern, classification: { type: 'recoverable', retryable: true } });
      t.equal(server.queries.length, 4, 'the first attempt and three retries');
      const recommendations = (
        await app.inject({
          method: 'GET',
          url: '/api/ingest-jobs/failed/recommendations',
          headers: authHeaders(app),
        })
      ).json() as {
        recommendations: {
          importJobId: number;
          stage: string;
          recommendedAction: string;
          retryCount: number;
        }[];
      };
      t.match(recommendations.recommendations, [
        {
          importJobId: doc.jobs[0]?.id,
          stage: 'geocode-batch',
          recommendedAction: 'max_retries_exceeded',
          retryCount: 3,
        },
      ]);
      const events = await db.pool.oneFirst(
        sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from events`,
      );
      t.equal(events, 0, 'nothing half-written');
    },
  );
}
