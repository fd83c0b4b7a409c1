import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { policyFile } from '../../helpers/accounts.ts';
import type { TestDatabase } from '../../helpers/database.ts';
import { ingestApp, multipart, signIn, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';
import { type Sheet, xlsx } from '../../fixtures/ingest/workbooks.ts';

// The events an import creates count against its uploader's totalEvents and the job's
// eventsPerImport, in the transaction of the batch that stores them: the import stops at the
// limit, keeps what fit, and fails with the quota's error. Real database, real workers.

const csv = (rows: number, prefix: string) =>
  `time,title,latitude,longitude\n${Array.from(
    { length: rows },
    (_, i) => `2024-01-01T00:${String(i % 60).padStart(2, '0')}:00Z,${prefix} ${i + 1},${1 + i / 100},2`,
  ).join('\n')}\n`;

const JobRow = Type.Object({
  id: Type.Number(),
  stage: Type.String(),
  code: Type.Union([Type.String(), Type.Null()]),
  dataset_id: Type.Number(),
  events: Type.Number(),
});

async function jobsOf(db: TestDatabase, fileId: number) {
  return db.pool.any(sql.type(row(JobRow))`
    select j.id, j.stage, j.error_log ->> 'code' as code, j.dataset_id,
           (select count(*)::int from events e where e.dataset_id = j.dataset_id) as events
    from ingest_jobs j where j.ingest_file_id = ${fileId} order by j.sheet_index`);
}

async function titles(db: TestDatabase, datasetId: number): Promise<string[]> {
  const rows = await db.pool.any(sql.type(row(Type.Object({ title: Type.String() })))`
    select title from events where dataset_id = ${datasetId}`);
  return rows.map((r) => r.title).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
}

t.test('a level-1 account cannot import past eventsPerImport or totalEvents', async (t) => {
  const quotasFile = policyFile(t, (p) => {
    p.quotas.eventsPerImport.levels[1] = 30;
    p.quotas.totalEvents.levels[1] = 50;
  });
  // Batches of 8: the limits fall inside a batch, whose events up to the limit are stored.
  const { app, db, catalogId } = await ingestApp(t, { batchSize: 8, deferCountsMinRows: 1_000_000 }, true, {
    quotasFile,
  });
  const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
  const auth = { authorization: `Bearer ${user.token}` };
  const send = async (name: string, content: string) => {
    const body = multipart(
      { catalog: String(catalogId), settings: '{"geocoding":false}' },
      { name, content },
    );
    const response = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: body.payload,
      headers: { ...body.headers, ...auth },
    });
    t.equal(response.statusCode, 201, response.body);
    const doc = (response.json() as { doc: UploadedDoc }).doc;
    await waitForFile(app, doc.id);
    return doc;
  };

  const first = await send('first.csv', csv(45, 'first'));
  const [perImport] = await jobsOf(db, first.id);
  t.match(perImport, { stage: 'failed', code: 'EVENTS_PER_IMPORT_EXCEEDED', events: 30 });
  t.same(
    await titles(db, perImport?.dataset_id as number),
    Array.from({ length: 30 }, (_, i) => `first ${i + 1}`),
    'the first 30 rows, in file order, and nothing past them',
  );
  const quotas = async () =>
    (await app.inject({ method: 'GET', url: '/api/quotas', headers: auth })).json().quotas;
  t.match(
    (await quotas()).totalEvents,
    { used: 30, limit: 50, remaining: 20 },
    '/api/quotas shows the events used',
  );

  const second = await send('second.csv', csv(45, 'second'));
  const [total] = await jobsOf(db, second.id);
  t.match(total, { stage: 'failed', code: 'QUOTA_EXCEEDED', events: 20 });
  t.same(
    await titles(db, total?.dataset_id as number),
    Array.from({ length: 20 }, (_, i) => `second ${i + 1}`),
  );
  t.match((await quotas()).totalEvents, { used: 50, limit: 50, remaining: 0 });

  const job = (
    await app.inject({ method: 'GET', url: `/api/ingest-jobs/${total?.id}`, headers: auth })
  ).json();
  t.match(job.errorLog, {
    code: 'QUOTA_EXCEEDED',
    lastError: /limit of 50 stored events.*totalEvents/,
    classification: { type: 'user_action_required' },
  });
  const perImportJob = (
    await app.inject({ method: 'GET', url: `/api/ingest-jobs/${perImport?.id}`, headers: auth })
  ).json();
  t.match(perImportJob.errorLog, {
    code: 'EVENTS_PER_IMPORT_EXCEEDED',
    lastError: /limit of 30 events.*eventsPerImport/,
    classification: { type: 'user_action_required' },
  });

  const third = await send('third.csv', csv(5, 'third'));
  t.match(
    await jobsOf(db, third.id),
    [{ stage: 'failed', code: 'QUOTA_EXCEEDED', events: 0 }],
    'nothing fits any more',
  );
  t.match((await quotas()).totalEvents, { used: 50 });
});

t.test('an import stopped by eventsPerImport continues with the rest once the level allows', async (t) => {
  const quotasFile = policyFile(t, (p) => {
    p.quotas.eventsPerImport.levels[1] = 30;
  });
  const { app, db, catalogId } = await ingestApp(t, { batchSize: 8, deferCountsMinRows: 1_000_000 }, true, {
    quotasFile,
  });
  const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
  const auth = { authorization: `Bearer ${user.token}` };
  const body = multipart(
    { catalog: String(catalogId), settings: '{"geocoding":false}' },
    { name: 'big.csv', content: csv(45, 'row') },
  );
  const response = await app.inject({
    method: 'POST',
    url: '/api/ingest-files',
    payload: body.payload,
    headers: { ...body.headers, ...auth },
  });
  const doc = (response.json() as { doc: UploadedDoc }).doc;
  await waitForFile(app, doc.id);
  const [stopped] = await jobsOf(db, doc.id);
  t.match(stopped, { stage: 'failed', code: 'EVENTS_PER_IMPORT_EXCEEDED', events: 30 });

  const recommendations = async () =>
    (
      await app.inject({ method: 'GET', url: '/api/ingest-jobs/failed/recommendations', headers: auth })
    ).json().recommendations;
  t.match(
    (await recommendations()).filter((r: { importJobId: number }) => r.importJobId === stopped?.id),
    [
      {
        importJobId: stopped?.id,
        recommendedAction: 'manual_intervention',
        errorClassification: { type: 'user_action_required', retryable: true },
      },
    ],
  );

  // My imports names the limit and who can lift it, and offers the Retry that will be taken; a file
  // that can never import (a header without rows: permanent) gets no Retry.
  const emptyBody = multipart(
    { catalog: String(catalogId), settings: '{"geocoding":false}' },
    { name: 'empty.csv', content: 'time,title,latitude,longitude\n' },
  );
  const empty = (
    await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: emptyBody.payload,
      headers: { ...emptyBody.headers, ...auth },
    })
  ).json() as { doc: UploadedDoc };
  await waitForFile(app, empty.doc.id);
  const [emptyJob] = await jobsOf(db, empty.doc.id);
  t.equal(emptyJob?.stage, 'failed');
  const page = (await app.inject({ method: 'GET', url: '/account/imports', headers: auth })).body;
  t.match(page, /more rows than one import may store at your trust level/);
  t.match(page, /ask an administrator to raise your trust level/);
  t.match(
    page,
    new RegExp(`action="/account/imports/jobs/${stopped?.id}/retry"`),
    'Retry for the stopped import',
  );
  t.notMatch(
    page,
    new RegExp(`action="/account/imports/jobs/${emptyJob?.id}/retry"`),
    'none for the empty file',
  );

  // An admin raises the level (level 2 keeps the shipped 100,000 per import); the same job goes on.
  await db.pool.query(sql.unsafe`update users set trust_level = 2 where id = ${user.id}`);
  const retry = await app.inject({
    method: 'POST',
    url: `/api/ingest-jobs/${stopped?.id}/retry`,
    headers: auth,
  });
  t.equal(retry.statusCode, 200, retry.body);
  t.match(retry.json(), { success: true, action: 'retry_scheduled' });
  const done = await waitForFile(app, doc.id, (p) => p.status === 'completed');
  t.equal(done.status, 'completed');
  t.same(
    await titles(db, stopped?.dataset_id as number),
    Array.from({ length: 45 }, (_, i) => `row ${i + 1}`),
    'every row once: the 30 stored before and the 15 after',
  );
  t.same(
    (await recommendations()).map((r: { importJobId: number }) => r.importJobId),
    [emptyJob?.id],
    'only the empty file is still failed',
  );
});

t.test(
  'a quota reached mid-workbook keeps the sheets done and fails the rest with the quota error',
  async (t) => {
    const quotasFile = policyFile(t, (p) => {
      p.quotas.totalEvents.levels[1] = 50;
    });
    const { app, db, catalogId } = await ingestApp(
      t,
      { batchSize: 8, concurrency: 1, deferCountsMinRows: 1_000_000 },
      true,
      { quotasFile },
    );
    const user = await signIn(app, db.pool, { trustLevel: 1, owns: catalogId });
    const sheet = (name: string): Sheet => ({
      name,
      rows: [
        ['time', 'title', 'latitude', 'longitude'],
        ...Array.from({ length: 20 }, (_, i) => [
          { dateIso: '2026-06-01T18:00:00Z' },
          `${name} ${i + 1}`,
          52.5,
          13.4,
        ]),
      ],
    });
    const body = multipart(
      { catalog: String(catalogId), settings: '{"geocoding":false}' },
      { name: 'book.xlsx', content: xlsx(['A', 'B', 'C', 'D'].map(sheet)) },
    );
    const response = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: body.payload,
      headers: { ...body.headers, authorization: `Bearer ${user.token}` },
    });
    t.equal(response.statusCode, 201, response.body);
    const doc = (response.json() as { doc: UploadedDoc }).doc;
    const progress = await waitForFile(app, doc.id);
    t.equal(progress.status, 'partial');

    const jobs = await jobsOf(db, doc.id);
    const done = jobs.filter((j) => j.stage === 'completed');
    const stopped = jobs.filter((j) => j.stage === 'failed');
    t.equal(done.length, 2, 'two sheets fit and stay');
    t.ok(
      done.every((j) => j.events === 20),
      'a completed sheet has all its events',
    );
    t.equal(stopped.length, 2);
    t.ok(
      stopped.every((j) => j.code === 'QUOTA_EXCEEDED'),
      'the rest fail with the quota error',
    );
    t.equal(
      jobs.reduce((sum, j) => sum + j.events, 0),
      50,
      'exactly the limit is stored',
    );
    for (const job of stopped) {
      const stored = await titles(db, job.dataset_id);
      const name = stored[0]?.split(' ')[0] ?? '';
      t.same(
        stored,
        Array.from({ length: job.events }, (_, i) => `${name} ${i + 1}`),
        'a stopped sheet kept its first rows up to the limit, whole, and nothing after',
      );
    }
    const quotas = (
      await app.inject({
        method: 'GET',
        url: '/api/quotas',
        headers: { authorization: `Bearer ${user.token}` },
      })
    ).json().quotas;
    t.match(quotas.totalEvents, { used: 50, limit: 50, remaining: 0 });
  },
);
