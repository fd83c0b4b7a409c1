import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { countEvents, ingestApp, type UploadedDoc, upload, waitForFile } from '../fixtures/ingest/client.ts';

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

  const earlier = (await app.inject({ method: 'GET', url: `/api/import/${doc.id}/progress` })).json() as {
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
