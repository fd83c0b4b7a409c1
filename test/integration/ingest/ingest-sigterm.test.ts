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
import { startWorker, waitForOutput } from '../../helpers/cli.ts';

// One worker per import across a shutdown (issue 32 §1): a worker SIGTERMed in the middle of
// create-events stops its import before pg-boss hands the job to another worker. Each worker's
// connections carry their own application_name, and a statement trigger stamps every write to the
// import's tables with the writer's application_name, PostgreSQL's clock, and how many statements
// of the other worker were running at that moment: the last write of the stopped worker comes before
// the first write of the one that took the job over, and none of the stopped worker's statements
// runs beside any write of the new one.
//
// The first worker's batch waits on a lock the test holds, so the SIGTERM lands in the middle of the
// import whatever the machine's speed. Released as soon as the worker says it got the SIGTERM, the
// batch goes on and the import stops at its next batch boundary (with pg-boss's grace alone the old
// worker went on writing for 10 s, and beside the new one once pg-boss handed the job over); held
// until the worker exits, the waiting insert is cancelled.

const WriteRow = row(
  Type.Object({ writer: Type.String(), first: Type.String(), last: Type.String(), beside: Type.Number() }),
);
const Progress = row(Type.Object({ status: Type.String(), rows_processed: Type.Number() }));

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Whether a statement of the worker named `name` waits on a lock. */
async function waitingOnLock(pool: Awaited<ReturnType<typeof ingestApp>>['db']['pool'], name: string) {
  const waiting = await pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int as n from pg_stat_activity
      where application_name = ${name} and wait_event_type = 'Lock'`,
  );
  return waiting > 0;
}

function withApplicationName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

async function sigtermMidImport(t: Test, release: 'at-sigterm' | 'after-exit') {
  const { app, db, catalogId, dataDir } = await ingestApp(t, {}, false);
  const pool = db.pool;
  // Test-only bookkeeping in the test's own database: who wrote the import's rows, when, and beside
  // how many running statements of the other worker.
  await pool.query(sql.unsafe`
    create table test_writes (writer text not null, at timestamptz not null, beside int not null)`);
  await pool.query(sql.unsafe`
    create function test_stamp_write() returns trigger language plpgsql as $$
    begin
      insert into test_writes
      select current_setting('application_name'), clock_timestamp(), count(*)
      from pg_stat_activity
      where application_name like 'worker-%' and application_name <> current_setting('application_name')
        and state = 'active';
      return null;
    end $$`);
  for (const table of ['events', 'ingest_job_stages'])
    await pool.query(sql.unsafe`
      create trigger test_stamp_write after insert or update on ${sql.identifier([table])}
      for each statement execute function test_stamp_write()`);

  const rows = 20_000;
  const { doc, jobId, datasetId } = await uploadCsv(
    app,
    catalogId,
    'many.csv',
    generatedEventLines(rows, 'e'),
  );
  const env = (name: string) => ({
    DATABASE_URL: withApplicationName(db.url, name),
    CHRONOMAP_DATA_DIR: dataDir,
    INGEST_BATCH_SIZE: '200',
    // One batch at a time (counts not deferred): no lock_timeout of concurrent batches.
    INGEST_DEFER_COUNTS_MIN_ROWS: '1000000',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info', // the shutdown's lines are read below
    GEOCODER: 'off',
  });
  const progress = () =>
    pool.maybeOne(sql.type(Progress)`
      select status, rows_processed::int as rows_processed
      from ingest_job_stages where ingest_job_id = ${jobId} and stage = 'create-events'`);

  const first = await startWorker(t, env('worker-first'));
  while (((await progress())?.rows_processed ?? 0) < 1000) await pause();
  let unlock = () => {};
  const unlocked = new Promise<void>((resolve) => (unlock = resolve));
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = pool.transaction(async (transaction) => {
    await transaction.query(sql.unsafe`lock table events in share mode`);
    locked();
    await unlocked;
  });
  await isLocked;
  while (!(await waitingOnLock(pool, 'worker-first'))) await pause();

  // The second worker polls the queue while the first one shuts down, as in a rolling restart.
  const second = await startWorker(t, env('worker-second'));
  const exited = new Promise<number | null>((resolve) => first.child.once('exit', resolve));
  first.child.kill('SIGTERM');
  if (release === 'at-sigterm') {
    await waitForOutput(first.child, /SIGTERM received/);
    unlock();
  }
  t.equal(await exited, 0, 'the SIGTERMed worker exits cleanly');
  unlock();
  await holding;
  const atStop = await progress();
  t.equal(atStop?.status, 'in_progress', 'it stopped in the middle of create-events');
  t.ok((atStop?.rows_processed ?? 0) < rows, `${atStop?.rows_processed} of ${rows} rows done at the stop`);

  const done = await waitForFile(app, doc.id, (p) => p.status === 'completed' || p.status === 'failed', 3000);
  t.equal(done.status, 'completed', JSON.stringify(done.errorLog));
  t.match(
    second.out(),
    new RegExp(`ingest job ${jobId}: resuming at create-events with ${atStop?.rows_processed} of`),
    'the second worker resumed it where the first one stopped',
  );
  t.equal(done.jobs[0]?.results?.created, rows, 'every event created once across both workers');
  t.equal(await countEvents(pool, datasetId), rows);

  const writes = await pool.any(sql.type(WriteRow)`
    select writer, min(at)::text as first, max(at)::text as last, max(beside)::int as beside
    from test_writes where writer like 'worker-%' group by writer`);
  const by = new Map(writes.map((write) => [write.writer, write]));
  const old = by.get('worker-first');
  const next = by.get('worker-second');
  t.ok(old && next, `both workers wrote the import (${JSON.stringify(writes)})`);
  const ordered = await pool.oneFirst(
    sql.type(row(Type.Object({ ordered: Type.Boolean() })))`
      select ${old?.last ?? ''}::timestamptz < ${next?.first ?? ''}::timestamptz as ordered`,
  );
  t.ok(ordered, `the first worker's last write (${old?.last}) precedes the second's first (${next?.first})`);
  t.equal(next?.beside, 0, "no statement of the first worker ran at any of the second's writes");
  return { first: first.out() };
}

t.test(
  'SIGTERM during create-events: the import stops at its next batch, then the job is handed over',
  async (t) => {
    const { first } = await sigtermMidImport(t, 'at-sigterm');
    t.match(first, /shutdown: 1 running job\(s\) stopped/, 'the worker stopped the import it was running');
  },
);

t.test('SIGTERM while a batch waits: its statement is cancelled before the job is handed over', async (t) => {
  const { first } = await sigtermMidImport(t, 'after-exit');
  t.match(
    first,
    /shutdown: 1 running job\(s\) stopped, 1 by cancelling their statements/,
    'the worker cancelled the insert that waited',
  );
});
