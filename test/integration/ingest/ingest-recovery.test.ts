import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { localSourceFiles } from '../../../src/adapters/files/local-source-files.ts';
import { offlineGazetteer } from '../../../src/adapters/geocoding/offline-gazetteer.ts';
import { pgBossIngestQueue, startIngestWorker } from '../../../src/adapters/jobs/ingest-worker.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresIngestStore } from '../../../src/adapters/postgres/ingest/ingest-store.ts';
import { unlimitedQuotas } from '../../helpers/quotas.ts';
import { createIngestFile } from '../../../src/application/ingest/create-ingest-file.ts';
import { parseIngestSettings } from '../../../src/domain/ingest/settings.ts';
import {
  authHeaders,
  countEvents,
  ingestApp,
  jobRow,
  upload,
  type UploadedDoc,
  waitForFile,
} from '../../fixtures/ingest/client.ts';

// Recovery: retry, reset, recommendations, approval of drift and of reviews, one failing sheet.

const CSV = [
  'time,latitude,longitude,title',
  '2026-01-01T00:00:00Z,52.5,13.4,a',
  '2026-01-02T00:00:00Z,48.8,2.3,b',
].join('\n');
const WIDER = [
  'time,latitude,longitude,title,extra',
  '2026-01-03T00:00:00Z,52.5,13.4,c,x',
  '2026-01-04T00:00:00Z,48.8,2.3,d,y',
].join('\n');

t.test('retry and reset answer exactly the spec bodies', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const bad = (
    (await upload(app, catalogId, { name: 'bad.csv', content: '' })).json() as { doc: UploadedDoc }
  ).doc;
  await waitForFile(app, bad.id);
  const badJob = bad.jobs[0]?.id as number;

  for (const base of ['/api/ingest-jobs', '/api/import-jobs']) {
    const refused = await app.inject({
      method: 'POST',
      url: `${base}/${badJob}/retry`,
      headers: authHeaders(app),
    });
    t.equal(refused.statusCode, 400);
    t.match(refused.json(), { success: false, action: 'not_retryable', error: /permanent/, statusCode: 400 });
  }
  t.equal(
    (await app.inject({ method: 'POST', url: '/api/ingest-jobs/999999/retry', headers: authHeaders(app) }))
      .statusCode,
    404,
  );

  const good = (
    (await upload(app, catalogId, { name: 'good.csv', content: CSV })).json() as { doc: UploadedDoc }
  ).doc;
  await waitForFile(app, good.id);
  const goodJob = good.jobs[0]?.id as number;
  const notFailed = await app.inject({
    method: 'POST',
    url: `/api/ingest-jobs/${goodJob}/retry`,
    headers: authHeaders(app),
  });
  t.match(notFailed.json(), { success: false, action: 'not_retryable', statusCode: 400 });

  const wrongStage = await app.inject({
    method: 'POST',
    url: `/api/ingest-jobs/${goodJob}/reset`,
    payload: { stage: 'CREATE_EVENTS' },
    headers: authHeaders(app),
  });
  t.equal(wrongStage.statusCode, 400);
  t.match(wrongStage.json(), {
    error: 'Bad Request',
    message: /analyze-duplicates, detect-schema, validate-schema, geocode-batch/,
  });
  const wrongStageEarlier = await app.inject({
    method: 'POST',
    url: `/api/import-jobs/${goodJob}/reset`,
    payload: { stage: 'create-events' },
    headers: authHeaders(app),
  });
  t.match(wrongStageEarlier.json(), {
    message: /ANALYZE_DUPLICATES, DETECT_SCHEMA, VALIDATE_SCHEMA, GEOCODE_BATCH/,
  });

  const reset = await app.inject({
    method: 'POST',
    url: `/api/import-jobs/${goodJob}/reset`,
    payload: { stage: 'GEOCODE_BATCH' },
    headers: authHeaders(app),
  });
  t.equal(reset.statusCode, 200);
  t.same(reset.json(), {
    success: true,
    message: `job ${goodJob} was reset to GEOCODE_BATCH and queued`,
    stage: 'GEOCODE_BATCH',
  });
  const again = await waitForFile(
    app,
    good.id,
    (p) => p.status === 'completed' && p.jobs[0]?.currentStage === 'completed',
  );
  t.same(
    again.jobs[0]?.stages.filter((s) => s.status === 'completed').map((s) => s.name),
    ['analyze-duplicates', 'detect-schema', 'validate-schema', 'create-schema-version', 'create-events'],
  );
  t.equal(again.jobs[0]?.results?.created, 0, 'the events already created are kept, not created twice');
  t.equal(again.jobs[0]?.results?.duplicates, 2);
  t.equal(await countEvents(db.pool, good.datasets[0] as number), 2);
});

t.test('a recoverable failure past its retries is retried by hand and completes', async (t) => {
  let failing = true;
  const server = http.createServer((_request, response) => {
    if (failing) response.writeHead(503).end('busy');
    else
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end('[{"lat":"1","lon":"2","importance":0.9}]');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { app, catalogId } = await ingestApp(t, {
    geocoder: { kind: 'nominatim', url, requestsPerSecond: 200, timeoutMs: 1000, minConfidence: 0.5 },
  });
  const csv = 'time,place\n2026-01-01T00:00:00Z,Somewhere\n';
  const doc = ((await upload(app, catalogId, { name: 'p.csv', content: csv })).json() as { doc: UploadedDoc })
    .doc;
  const failed = await waitForFile(app, doc.id);
  t.equal(failed.status, 'failed');
  const jobId = doc.jobs[0]?.id as number;
  t.equal((await jobRow(app, jobId)).retryAttempts, 3);

  failing = false;
  const before = Date.now();
  const retry = await app.inject({
    method: 'POST',
    url: `/api/ingest-jobs/${jobId}/retry`,
    headers: authHeaders(app),
  });
  t.equal(retry.statusCode, 200);
  const body = retry.json() as { nextRetryAt: string };
  t.match(body, {
    success: true,
    action: 'retry_scheduled',
    retryScheduled: true,
    message: /restarts at geocode-batch \(attempt 4\)/,
  });
  t.ok(
    Date.parse(body.nextRetryAt) >= before + 1000,
    'the fourth attempt waits the capped backoff (1 s in this test)',
  );
  const done = await waitForFile(app, doc.id, (p) => p.status === 'completed');
  t.equal(done.jobs[0]?.results?.geocoded, 1);
  const recommendations = (
    await app.inject({
      method: 'GET',
      url: '/api/ingest-jobs/failed/recommendations',
      headers: authHeaders(app),
    })
  ).json();
  t.same(recommendations, { recommendations: [] }, 'nothing failed any more');
});

t.test('a breaking schema change stops a manual import until it is approved', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const strict = JSON.stringify({ schemaMode: 'strict' });
  const first = (
    (await upload(app, catalogId, { name: 'v1.csv', content: CSV }, { settings: strict })).json() as {
      doc: UploadedDoc;
    }
  ).doc;
  await waitForFile(app, first.id);
  const datasetId = first.datasets[0] as number;
  const second = (
    (
      await upload(
        app,
        catalogId,
        { name: 'v2.csv', content: WIDER },
        { settings: strict, dataset: String(datasetId) },
      )
    ).json() as {
      doc: UploadedDoc;
    }
  ).doc;
  const stopped = await waitForFile(app, second.id);
  t.equal(stopped.status, 'failed');
  const jobId = second.jobs[0]?.id as number;
  const job = await jobRow(app, jobId);
  t.match(job.errorLog, {
    code: 'SCHEMA_DRIFT',
    lastError: /added extra/,
    classification: { type: 'user_action_required' },
  });
  const recommendations = (
    await app.inject({
      method: 'GET',
      url: '/api/import-jobs/failed/recommendations',
      headers: authHeaders(app),
    })
  ).json() as {
    recommendations: Record<string, unknown>[];
  };
  t.match(recommendations.recommendations, [
    {
      importJobId: jobId,
      importFileName: 'v2.csv',
      stage: 'VALIDATE_SCHEMA',
      recommendedAction: 'approve_schema_changes',
      retryCount: 0,
    },
  ]);
  t.equal(await countEvents(db.pool, datasetId), 2, 'nothing of the second file was written');

  // A retry would only fail again: refused (before any quota is asked for), naming the approval.
  const retry = await app.inject({
    method: 'POST',
    url: `/api/ingest-jobs/${jobId}/retry`,
    headers: authHeaders(app),
  });
  t.equal(retry.statusCode, 400);
  t.match(retry.json(), { success: false, action: 'not_retryable', statusCode: 400, error: /approve/ });
  t.match(await jobRow(app, jobId), { stage: 'failed', retryAttempts: 0 }, 'nothing was scheduled');

  const approve = await app.inject({
    method: 'PATCH',
    url: `/api/ingest-jobs/${jobId}`,
    payload: { approved: true },
    headers: authHeaders(app),
  });
  t.equal(approve.statusCode, 200, approve.body);
  t.match(approve.json(), {
    doc: { id: jobId, stage: 'validate-schema' },
    message: /continues at validate-schema/,
  });
  const done = await waitForFile(app, second.id, (p) => p.status === 'completed');
  t.equal(done.jobs[0]?.results?.created, 2);
  const versions = await db.pool.anyFirst(
    sql.type(
      row(Type.Object({ version: Type.Number() })),
    )`select version from dataset_schema_versions where dataset_id = ${datasetId} order by version`,
  );
  t.same(versions, [1, 2]);
  const conflict = await app.inject({
    method: 'PATCH',
    url: `/api/ingest-jobs/${jobId}`,
    payload: { approved: true },
    headers: authHeaders(app),
  });
  t.equal(conflict.statusCode, 409, 'a completed job has nothing to approve');
});

/** Files from automated sources (scheduled, webhook, scraper) go through needs-review. */
async function automatedImport(
  t: Test,
  setup: Awaited<ReturnType<typeof ingestApp>>,
  content: string,
  datasetId: number | null,
  sheets: string[] = ['only'],
) {
  const relative = `auto-${Math.random().toString(36).slice(2)}.csv`;
  mkdirSync(path.join(setup.dataDir, 'ingest'), { recursive: true });
  writeFileSync(path.join(setup.dataDir, 'ingest', relative), content);
  const store = postgresIngestStore(setup.db.pool);
  const created = await createIngestFile(
    { store, queue: pgBossIngestQueue(setup.services.boss), quotas: unlimitedQuotas },
    {
      originalName: 'feed.csv',
      storedPath: relative,
      sizeBytes: content.length,
      mimeType: 'text/csv',
      format: 'csv',
      source: 'scheduled',
      catalogId: setup.catalogId,
      userId: null,
      settings: parseIngestSettings({}, datasetId ?? 'new'),
      sheets,
    },
  );
  t.ok(created.file.id);
  return created;
}

t.test('an automated import with drift waits in needs-review; approval runs the rest', async (t) => {
  const setup = await ingestApp(t);
  const { app, db } = setup;
  const first = await automatedImport(t, setup, CSV, null);
  const firstDone = await waitForFile(app, first.file.id);
  t.equal(firstDone.status, 'completed', 'the first version is no drift');
  const datasetId = first.jobs[0]?.datasetId as number;
  const second = await automatedImport(t, setup, WIDER, datasetId);
  const review = await waitForFile(app, second.file.id);
  t.equal(review.status, 'needs-review');
  const job = review.jobs[0];
  t.equal(job?.currentStage, 'needs-review');
  t.match(job?.schemaValidation, { requiresApproval: true, reasons: ['schema drift'] });
  // needs-review is not completed while it waits: the review is not done.
  t.same(
    job?.stages.map((s) => s.status),
    ['completed', 'completed', 'completed', 'in_progress', 'pending', 'pending', 'pending'],
  );
  t.same(
    job?.stages.map((s) => s.state),
    ['completed', 'completed', 'completed', 'waiting', 'pending', 'pending', 'pending'],
  );
  const earlier = (
    await app.inject({
      method: 'GET',
      url: `/api/import/${second.file.id}/progress`,
      headers: authHeaders(app),
    })
  ).json() as { jobs: { stage: string }[] };
  t.equal(earlier.jobs[0]?.stage, 'AWAITING_APPROVAL');
  const approve = await app.inject({
    method: 'PATCH',
    url: `/api/import-jobs/${job?.id}`,
    payload: { approved: true },
    headers: authHeaders(app),
  });
  t.match(approve.json(), {
    message: /continues at CREATE_SCHEMA_VERSION/,
    doc: { stage: /^[A-Z_]+$/ },
  });
  const done = await waitForFile(app, second.file.id, (p) => p.status === 'completed');
  t.equal(done.jobs[0]?.results?.created, 2);
  t.equal(await countEvents(db.pool, datasetId), 4);
});

t.test('one failing sheet is FAILED while the other completes; the file is partial', async (t) => {
  const setup = await ingestApp(t, {}, false);
  const { app, db, services } = setup;
  const created = await automatedImport(t, setup, CSV, null, ['good', 'bad']);
  const store = postgresIngestStore(db.pool);
  const bad = created.jobs[1];
  if (!bad) throw new Error('two sheets make two jobs');
  // The second sheet maps its timestamp to a column the file does not have.
  await store.revise(bad.id, {
    approved: false,
    config: { ...bad.config, fieldMapping: { timestamp: 'missing' } },
  });
  await startIngestWorker(
    services.boss,
    {
      store,
      files: localSourceFiles(path.join(setup.dataDir, 'ingest')),
      geocoder: offlineGazetteer(),
      queue: pgBossIngestQueue(services.boss),
      countsRefresh: pgBossIngestQueue(services.boss),
      quotas: unlimitedQuotas,
      deferCountsMinRows: 20_000,
      deferredWriters: 2,
      clock: systemClock,
      retry: { baseDelayMs: 100, backoffMultiplier: 2, maxDelayMs: 500, maxAttempts: 3 },
      batchSize: 1000,
    },
    { concurrency: 2, log: () => {} },
  );
  const progress = await waitForFile(app, created.file.id);
  t.equal(progress.status, 'partial');
  t.equal(progress.datasetsProcessed, 2);
  t.same(
    progress.jobs.map((j) => j.currentStage),
    ['completed', 'failed'],
  );
  t.match(progress.errorLog, [/^bad: settings.fieldMapping.timestamp names column "missing"/]);
  // The stage it failed at says failed; the spec's status field keeps a value of its own set.
  const failedStage = progress.jobs[1]?.stages.find((s) => s.name === 'detect-schema');
  t.equal(failedStage?.state, 'failed');
  t.equal(failedStage?.status, 'in_progress');
  t.same(
    progress.jobs[0]?.stages.map((s) => s.state),
    progress.jobs[0]?.stages.map((s) => s.status),
    'a completed job: every state is its status',
  );
  t.equal(await countEvents(db.pool, created.jobs[0]?.datasetId as number), 2);
  t.equal(await countEvents(db.pool, bad.datasetId as number), 0);
});
