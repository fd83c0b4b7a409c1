import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  countEvents,
  ingestApp,
  generatedEventLines,
  uploadCsv,
  waitForFile,
} from '../../fixtures/ingest/client.ts';
import { startWorker } from '../../helpers/cli.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';

// A worker process killed with SIGKILL in the middle of create-events or geocode-batch; another
// worker picks the job up (pg-boss notices the stopped heartbeat) and the import completes with
// exactly the right events, none twice.

const StageRow = row(
  Type.Object({ status: Type.String(), rows_processed: Type.Number(), rows_total: Type.Number() }),
);

async function stageOf(
  pool: Awaited<ReturnType<typeof ingestApp>>['db']['pool'],
  jobId: number,
  stage: string,
) {
  return pool.maybeOne(sql.type(StageRow)`
    select status, rows_processed::int as rows_processed, rows_total::int as rows_total
    from ingest_job_stages where ingest_job_id = ${jobId} and stage = ${stage}`);
}

async function killWhen(child: ChildProcess, condition: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 6000; i++) {
    if (await condition()) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('the condition to kill the worker never came');
}

/** Starts a worker, kills it once the stage has processed `threshold` rows, checks it was mid-stage. */
async function killMidStage(
  t: Test,
  env: Record<string, string>,
  pool: Awaited<ReturnType<typeof ingestApp>>['db']['pool'],
  jobId: number,
  stage: string,
  threshold: number,
  total: number,
) {
  const worker = await startWorker(t, env);
  await killWhen(
    worker.child,
    async () => ((await stageOf(pool, jobId, stage))?.rows_processed ?? 0) >= threshold,
  );
  const atKill = await stageOf(pool, jobId, stage);
  t.equal(atKill?.status, 'in_progress', `killed in the middle of ${stage}`);
  t.ok((atKill?.rows_processed ?? 0) < total, `${atKill?.rows_processed} of ${total} rows done at the kill`);
  return atKill;
}

t.test('SIGKILL during create-events: the restarted worker completes with every event once', async (t) => {
  const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false);
  const rows = 100_000;
  const { doc, jobId, datasetId } = await uploadCsv(
    app,
    catalogId,
    'many.csv',
    generatedEventLines(rows, 'event'),
  );
  const env = {
    DATABASE_URL: db.url,
    CHRONOMAP_DATA_DIR: dataDir,
    INGEST_BATCH_SIZE: '100',
    INGEST_DEFER_COUNTS_MIN_ROWS: '20000',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info', // the worker's lines are read below
    GEOCODER: 'off',
  };
  const pending = () =>
    db.pool.oneFirst(
      sql.type(row(Type.Object({ pending: Type.Boolean() })))`
        select counts_pending as pending from datasets where id = ${datasetId}`,
    );

  const atKill = await killMidStage(t, env, db.pool, jobId, 'create-events', 2000, rows);
  const committed = await countEvents(db.pool, datasetId);
  t.equal(committed, atKill?.rows_processed, 'the events committed are exactly the rows the progress says');
  t.equal(await pending(), true, 'the import of 100,000 rows into an empty dataset deferred its counts');

  const second = await startWorker(t, env);
  const progress = await waitForFile(
    app,
    doc.id,
    (p) => p.status === 'completed' || p.status === 'failed',
    3000,
  );
  t.equal(progress.status, 'completed', JSON.stringify(progress.errorLog));
  t.match(
    second.out(),
    `ingest job ${jobId}: resuming at create-events with ${atKill?.rows_processed} of ${rows} rows done ` +
      '(stages done before: analyze-duplicates, detect-schema, validate-schema, needs-review, ' +
      'create-schema-version, geocode-batch; automatic retries so far: 0)',
    'the worker that resumed the import logged where, with how much done',
  );
  t.equal(progress.jobs[0]?.results?.created, rows, 'created counts every event once across both workers');
  t.equal(progress.jobs[0]?.results?.duplicates, 0);
  t.equal(await countEvents(db.pool, datasetId), rows);
  // The resumed create-events queued the refresh when it ended; the worker runs it.
  while (await pending()) await new Promise((resolve) => setTimeout(resolve, 100));
  await assertCountTablesExact(t, db.pool, 'after the resumed import and the refresh');
});

t.test('SIGKILL during geocode-batch: the restarted worker asks only what was not answered', async (t) => {
  const queries: string[] = [];
  const server = http.createServer((request, response) => {
    const q = new URL(request.url ?? '/', 'http://x').searchParams.get('q') ?? '';
    queries.push(q);
    const n = Number(q.replace(/\D/g, ''));
    setTimeout(() => {
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify([{ lat: String((n % 80) + 1), lon: String((n % 170) + 1), importance: 0.9 }]));
    }, 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false);
  const places = 3000;
  const lines = ['time,place,title'];
  for (let i = 0; i < places * 2; i++) lines.push(`2026-01-01T00:00:00Z,Place ${i % places},row ${i}`);
  const { doc, jobId } = await uploadCsv(app, catalogId, 'places.csv', lines);
  const env = {
    DATABASE_URL: db.url,
    CHRONOMAP_DATA_DIR: dataDir,
    NODE_ENV: 'test',
    GEOCODER: 'nominatim',
    GEOCODER_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    GEOCODER_RATE_LIMIT: '1000',
  };

  await killMidStage(t, env, db.pool, jobId, 'geocode-batch', 400, places);
  const askedBefore = queries.length;

  await startWorker(t, env);
  const progress = await waitForFile(
    app,
    doc.id,
    (p) => p.status === 'completed' || p.status === 'failed',
    3000,
  );
  t.equal(progress.status, 'completed', JSON.stringify(progress.errorLog));
  t.equal(new Set(queries).size, places, 'every place was asked');
  t.ok(
    queries.length <= places + 1,
    `${queries.length} requests: at most the one in flight at the kill is asked again`,
  );
  t.ok(askedBefore < places, 'the first worker did not get to ask them all');
  t.equal(progress.jobs[0]?.results?.created, places * 2);
  t.equal(progress.jobs[0]?.results?.geocoded, places * 2);
  const located = await db.pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`select count(location)::int as n from events`,
  );
  t.equal(located, places * 2);
});
