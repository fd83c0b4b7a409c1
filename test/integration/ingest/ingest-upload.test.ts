import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { Type } from 'typebox';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  authHeaders,
  countEvents,
  ingestApp,
  multipart,
  preview,
  signIn,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../../fixtures/ingest/client.ts';

const USGS = readFileSync(path.join(projectRoot, 'examples', 'usgs-earthquakes.csv'));

t.test('the USGS file uploads, runs every stage and creates one event per row', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const response = await upload(app, catalogId, { name: 'usgs-earthquakes.csv', content: USGS });
  t.equal(response.statusCode, 201, response.body);
  const doc = (response.json() as { doc: UploadedDoc }).doc;
  t.equal(doc.status, 'pending');
  t.equal(doc.jobs.length, 1);
  const progress = await waitForFile(app, doc.id);
  t.equal(progress.status, 'completed', JSON.stringify(progress.errorLog));
  t.equal(progress.type, 'ingest-file');
  t.equal(progress.overallProgress, 100);
  t.equal(progress.datasetsCount, 1);
  t.equal(progress.datasetsProcessed, 1);
  const job = progress.jobs[0];
  t.equal(job?.currentStage, 'completed');
  t.same(
    job?.stages.map((s) => [s.name, s.status]),
    [
      ['analyze-duplicates', 'completed'],
      ['detect-schema', 'completed'],
      ['validate-schema', 'completed'],
      ['needs-review', 'skipped'],
      ['create-schema-version', 'completed'],
      ['geocode-batch', 'skipped'],
      ['create-events', 'completed'],
    ],
  );
  t.equal(job?.results?.created, 1943);
  t.equal(await countEvents(db.pool, doc.datasets[0] as number), 1943);
  // The file's rows and the batches done, not the configured batch size.
  const created = job?.stages.find((s) => s.name === 'create-events');
  t.same(created?.rows, { processed: 1943, total: 1943 });
  t.same(created?.batches, { current: 1, total: 1 });
  t.same(created?.currentBatch, { rowsProcessed: 1943, rowsTotal: 1943, percentage: 100 });

  const earlier = (
    await app.inject({
      method: 'GET',
      url: `/api/import/${doc.id}/progress`,
      headers: authHeaders(app),
    })
  ).json() as {
    type: string;
    jobs: { stage: string; rowsTotal: number; rowsProcessed: number }[];
  };
  t.equal(earlier.type, 'import-file');
  t.same(
    earlier.jobs.map((j) => [j.stage, j.rowsTotal, j.rowsProcessed]),
    [['COMPLETED', 1943, 1943]],
  );
});

t.test(
  'the same file imported twice: skip creates nothing new, update rewrites changed events',
  async (t) => {
    const { app, db, catalogId } = await ingestApp(t);
    const first = (await upload(app, catalogId, { name: 'usgs.csv', content: USGS })).json() as {
      doc: UploadedDoc;
    };
    await waitForFile(app, first.doc.id);
    const datasetId = first.doc.datasets[0] as number;
    const again = await upload(
      app,
      catalogId,
      { name: 'usgs.csv', content: USGS },
      { dataset: String(datasetId) },
    );
    t.equal(again.statusCode, 201, again.body);
    const second = await waitForFile(app, (again.json() as { doc: UploadedDoc }).doc.id);
    t.equal(second.status, 'completed');
    t.same(second.jobs[0]?.duplicates, { internal: 0, external: 1943 });
    t.equal(second.jobs[0]?.results?.created, 0);
    t.equal(await countEvents(db.pool, datasetId), 1943);

    const changed = USGS.toString().replace('145 km E of Hihifo, Tonga', '146 km E of Hihifo, Tonga');
    const update = await upload(
      app,
      catalogId,
      { name: 'usgs.csv', content: changed },
      {
        dataset: String(datasetId),
        settings: JSON.stringify({ duplicateHandling: 'update', idStrategy: 'external-id' }),
      },
    );
    const third = await waitForFile(app, (update.json() as { doc: UploadedDoc }).doc.id);
    t.equal(third.status, 'completed');
    t.equal(third.jobs[0]?.results?.created, 0);
    t.equal(third.jobs[0]?.results?.updated, 1, 'only the changed row is rewritten');
    t.equal(await countEvents(db.pool, datasetId), 1943);
  },
);

t.test("uploads need a logged-in user and count against the uploader's daily quotas", async (t) => {
  const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false);
  const body = multipart({ catalog: String(catalogId) }, { name: 'usgs.csv', content: USGS });
  const anonymous = await app.inject({ method: 'POST', url: '/api/ingest-files', ...body });
  t.equal(anonymous.statusCode, 401, anonymous.body);
  t.match(anonymous.json(), { error: String });
  const anonymousPreview = await app.inject({ method: 'POST', url: '/api/ingest/preview', ...body });
  t.equal(anonymousPreview.statusCode, 401, anonymousPreview.body);
  const badToken = await app.inject({
    method: 'POST',
    url: '/api/ingest-files',
    payload: body.payload,
    headers: { ...body.headers, authorization: 'Bearer not-a-token' },
  });
  t.equal(badToken.statusCode, 401, badToken.body);
  const files = await db.pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from ingest_files`,
  );
  t.equal(files, 0, 'no ingest file recorded');
  t.same(
    readdirSync(dataDir, { recursive: true }).filter((name) => String(name).endsWith('.csv')),
    [],
    'nothing stored on disk',
  );

  // Trust level 1: five uploads a day (config/quotas.yaml); the sixth is refused and not recorded.
  const limited = await signIn(app, db.pool, { trustLevel: 1 });
  const own = await db.pool.oneFirst(
    sql.type(row(Type.Object({ id: Type.Number() })))`
      insert into catalogs (slug, title, is_public, created_by) values ('limited', 'Limited', false, ${limited.id})
      returning id`,
  );
  const ownBody = multipart({ catalog: String(own) }, { name: 'usgs.csv', content: USGS });
  const send = () =>
    app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: ownBody.payload,
      headers: { ...ownBody.headers, authorization: `Bearer ${limited.token}` },
    });
  for (let i = 0; i < 5; i++) t.equal((await send()).statusCode, 201);
  const refused = await send();
  t.equal(refused.statusCode, 403, refused.body);
  t.match(refused.json(), { error: String, code: 'QUOTA_EXCEEDED' });
  const uploads = await db.pool.any(
    sql.type(row(Type.Object({ uploaded_by: Type.Number() })))`select uploaded_by from ingest_files`,
  );
  t.same(
    uploads.map((u) => u.uploaded_by),
    [limited.id, limited.id, limited.id, limited.id, limited.id],
    'each recorded upload names its uploader',
  );
  const quotas = await app.inject({
    method: 'GET',
    url: '/api/quotas',
    headers: { authorization: `Bearer ${limited.token}` },
  });
  t.match(quotas.json(), { quotas: { fileUploadsPerDay: { used: 5, limit: 5, remaining: 0 } } });
});

t.test('the schema preview shows detected fields and mappings and writes nothing', async (t) => {
  const { app, db, dataDir } = await ingestApp(t, {}, false);
  const response = await preview(app, { name: 'usgs.csv', content: USGS });
  t.equal(response.statusCode, 200, response.body);
  const previewed = response.json() as {
    fileName: string;
    sheets: {
      rowsSampled: number;
      mapping: Record<string, string>;
      fields: { name: string; type: string }[];
      sample: string[][];
    }[];
  };
  t.equal(previewed.fileName, 'usgs.csv');
  t.equal(previewed.sheets[0]?.rowsSampled, 1000);
  t.same(previewed.sheets[0]?.mapping, {
    timestamp: 'time',
    latitude: 'latitude',
    longitude: 'longitude',
    address: 'place',
    title: 'place',
    id: 'id',
  });
  t.match(previewed.sheets[0]?.fields.slice(0, 5), [
    { name: 'time', type: 'date' },
    { name: 'latitude', type: 'number' },
    { name: 'longitude', type: 'number' },
    { name: 'depth', type: 'number' },
    { name: 'mag', type: 'number' },
  ]);
  t.equal(previewed.sheets[0]?.sample.length, 6, 'the header and five rows');

  const latin1 = Buffer.from('Datum;Ort;Titel\n27.03.2026;Köln;Karneval\n', 'latin1');
  const german = await preview(
    app,
    { name: 'de.csv', content: latin1 },
    { settings: JSON.stringify({ fieldMapping: { title: 'Titel' } }) },
  );
  t.match(german.json(), {
    sheets: [
      {
        mapping: { timestamp: 'Datum', address: 'Ort', title: 'Titel' },
        sample: [
          ['Datum', 'Ort', 'Titel'],
          ['27.03.2026', 'Köln', 'Karneval'],
        ],
      },
    ],
  });

  const files = await db.pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from ingest_files`,
  );
  t.equal(files, 0, 'no record created');
  t.same(
    readdirSync(dataDir, { recursive: true }).filter((f) => /\.(csv|xlsx|ods)$/.test(String(f))),
    [],
    'no file kept',
  );
});
