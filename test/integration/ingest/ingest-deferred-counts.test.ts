import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { CommonQueryMethods } from 'slonik';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { localSourceFiles } from '../../../src/adapters/files/local-source-files.ts';
import { pgBossIngestQueue } from '../../../src/adapters/jobs/ingest-worker.ts';
import type { DatabasePool } from '../../../src/adapters/postgres/database.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventStore, storeEvents } from '../../../src/adapters/postgres/ingest/event-store.ts';
import { postgresIngestStore } from '../../../src/adapters/postgres/ingest/ingest-store.ts';
import { type IngestDeps, runIngestJob } from '../../../src/application/ingest/run-ingest-job.ts';
import { transient } from '../../../src/domain/ingest/failures.ts';
import type { IngestStore } from '../../../src/ports/ingest/ingest-store.ts';
import type { NewEvent } from '../../../src/domain/read/events.ts';
import { signIn, type UploadedDoc, upload } from '../../fixtures/ingest/client.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import { unlimitedQuotas } from '../../helpers/quotas.ts';
import { ensureCatalog, ensureDataset } from '../../helpers/collections.ts';

// Deferred counts (migration 0330, docs/ingestion.md "Deferred counts"): an import of at least
// INGEST_DEFER_COUNTS_MIN_ROWS rows into an empty dataset stores its events without the read API's
// counts; while the dataset is pending /api/v1 answers from the rows, exactly; the refresh then adds
// exactly what the triggers would have. Writers into a pending dataset, its deletion, and imports
// into non-empty datasets keep every count exact.

const MIN_ROWS = 100;
const WORLD = { north: 85, south: -85, east: 180, west: -180 };
const EUROPE = { north: 60, south: 35, east: 30, west: -10 };
const SPOT = { longitude: 13.405, latitude: 52.52 };

const N = row(Type.Object({ n: Type.Number() }));
const Flag = row(Type.Object({ pending: Type.Boolean() }));

/** Rows spread over the world and two years, a few at one spot, every tenth without coordinates. */
function csv(prefix: string, rows: number): string {
  const lines = ['id,time,latitude,longitude,title'];
  for (let i = 0; i < rows; i++) {
    const time = new Date(Date.UTC(2023 + (i % 2), (i * 5) % 12, 1 + (i % 28), i % 24, i % 60)).toISOString();
    const spot = i % 17 === 0;
    const lat = i % 10 === 9 ? '' : String(spot ? SPOT.latitude : ((i * 37) % 160) - 80 + 0.25);
    const lon = i % 10 === 9 ? '' : String(spot ? SPOT.longitude : ((i * 53) % 350) - 175 + 0.5);
    lines.push(`${prefix}${i},${time},${lat},${lon},${prefix} ${i}`);
  }
  return lines.join('\n');
}

function events(prefix: string, count: number, offset = 0): NewEvent[] {
  return Array.from({ length: count }, (_, k) => {
    const i = k + offset;
    return {
      uniqueId: `${prefix}${i}`,
      title: `${prefix} ${i}`,
      data: { i },
      location:
        i % 9 === 8
          ? null
          : i % 5 === 0
            ? SPOT
            : { longitude: ((i * 29) % 340) - 170 + 0.1, latitude: ((i * 13) % 150) - 75 + 0.1 },
      eventTimestamp: new Date(Date.UTC(2023, i % 12, 2 + (i % 25), 7)).toISOString(),
      isValid: true,
    };
  });
}

async function setup(t: Test) {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-deferred-test-'));
  const base = await testApp(t, {
    config: { dataDir, quotasFile: policyFile(t, unlimitedAnonymousReads) },
  });
  const { app, db, services } = base;
  const catalogId = await ensureCatalog(db.pool, {
    slug: 'imports',
    title: 'Imports',
    isPublic: true,
  });
  const uploader = await signIn(app, db.pool);
  // Uploads need write access to the catalog: the uploader owns it.
  await db.pool.query(sql.unsafe`update catalogs set created_by = ${uploader.id} where id = ${catalogId}`);
  const admin = await signIn(app, db.pool, { role: 'admin' });
  const queued: number[] = [];
  const deps: IngestDeps = {
    store: postgresIngestStore(db.pool),
    files: localSourceFiles(path.join(dataDir, 'ingest')),
    geocoder: null,
    queue: pgBossIngestQueue(services.boss),
    clock: systemClock,
    retry: { baseDelayMs: 100, backoffMultiplier: 2, maxDelayMs: 500, maxAttempts: 1 },
    batchSize: 40,
    deferCountsMinRows: MIN_ROWS,
    deferredWriters: 2,
    // The refresh is run by the test itself, when it wants the dataset to stop being pending.
    countsRefresh: { enqueueCountsRefresh: async (datasetId) => void queued.push(datasetId) },
    quotas: unlimitedQuotas,
  };
  return { app, db, catalogId, deps, queued, adminToken: admin.token };
}

/** Uploads a file (the upload's own job is run here, not by a worker) and runs its import. */
async function runImport(
  app: FastifyInstance,
  deps: IngestDeps,
  catalogId: number,
  file: { name: string; content: string },
  extra: Record<string, string> = {},
): Promise<number> {
  const doc = ((await upload(app, catalogId, file, extra)).json() as { doc: UploadedDoc }).doc;
  const outcome = await runIngestJob(deps, doc.jobs[0]?.id as number);
  if (outcome !== 'completed') {
    const job = await deps.store.getJob(doc.jobs[0]?.id as number);
    throw new Error(`the import ended ${outcome}: ${JSON.stringify(job?.errorLog)}`);
  }
  return doc.datasets[0] as number;
}

async function pending(pool: DatabasePool, datasetId: number): Promise<boolean> {
  return pool.oneFirst(
    sql.type(Flag)`select counts_pending as pending from datasets where id = ${datasetId}`,
  );
}

async function refresh(pool: DatabasePool, datasetId: number): Promise<boolean> {
  return pool.oneFirst(sql.type(Flag)`select chronomap_refresh_dataset_counts(${datasetId}) as pending`);
}

type Box = { north: number; south: number; east: number; west: number };

/** What the rows say: events matching an optional dataset, box and window. */
async function truth(
  pool: DatabasePool,
  filter: { datasetId?: number; box?: Box; from?: string; to?: string },
): Promise<number> {
  const conditions = [sql.fragment`true`];
  if (filter.datasetId !== undefined) conditions.push(sql.fragment`dataset_id = ${filter.datasetId}`);
  if (filter.box)
    conditions.push(sql.fragment`st_x(location) between ${filter.box.west} and ${filter.box.east}
      and st_y(location) between ${filter.box.south} and ${filter.box.north}`);
  if (filter.from) conditions.push(sql.fragment`event_timestamp >= ${filter.from}::timestamptz`);
  if (filter.to) conditions.push(sql.fragment`event_timestamp < ${filter.to}::timestamptz`);
  return pool.oneFirst(
    sql.type(N)`select count(*)::int as n from events where ${sql.join(conditions, sql.fragment` and `)}`,
  );
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON bodies and check the fields they use
type Body = any;

async function get(
  app: FastifyInstance,
  url: string,
  params: Record<string, unknown>,
  token: string | null,
): Promise<Body> {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    search.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  const response = await app.inject({
    method: 'GET',
    url: `${url}?${search}`,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
  return response.json();
}

/**
 * /api/v1 against the rows, for an anonymous caller (the totals rows answer it when no dataset is
 * pending) and an admin (no scope condition at all): totals, map feature counts, histogram sums,
 * stats, bounds and data sources, unfiltered, for the dataset, with a box and with a window.
 */
async function assertApiExact(
  t: Test,
  app: FastifyInstance,
  pool: DatabasePool,
  datasetId: number,
  adminToken: string,
  when: string,
): Promise<void> {
  const slug = await pool.oneFirst(
    sql.type(row(Type.Object({ slug: Type.String() })))`select slug from datasets where id = ${datasetId}`,
  );
  const window = { startDate: '2023-03-10T05:00:00Z', endDate: '2024-02-20T00:00:00Z' };
  const windowTruth = { from: window.startDate, to: '2024-02-20T00:00:00.001Z' };
  const cases: { name: string; params: Record<string, unknown>; expected: number; box: Box }[] = [
    { name: 'everything', params: {}, expected: await truth(pool, {}), box: WORLD },
    {
      name: 'the dataset',
      params: { datasets: slug },
      expected: await truth(pool, { datasetId }),
      box: WORLD,
    },
    {
      name: 'the catalog in Europe',
      params: { catalog: 'imports', bounds: EUROPE },
      expected: await truth(pool, { box: EUROPE }),
      box: EUROPE,
    },
    {
      name: 'the world in a window',
      params: { bounds: WORLD, ...window },
      expected: await truth(pool, { box: WORLD, ...windowTruth }),
      box: WORLD,
    },
    {
      name: 'a window',
      params: window,
      expected: await truth(pool, windowTruth),
      box: WORLD,
    },
  ];
  for (const token of [null, adminToken]) {
    const who = token ? 'admin' : 'anonymous';
    for (const c of cases) {
      const label = `${when}, ${who}, ${c.name}`;
      const list = await get(app, '/api/v1/events', { ...c.params, limit: 1 }, token);
      t.equal(list.pagination.totalDocs, c.expected, `${label}: /events total`);
      const temporal = await get(
        app,
        '/api/v1/events/temporal',
        { ...c.params, granularity: 'month' },
        token,
      );
      const binned = (temporal.histogram as { count: number }[]).reduce((sum, bin) => sum + bin.count, 0);
      t.equal(binned, c.expected, `${label}: /events/temporal sums to the total`);
      const stats = await get(app, '/api/v1/events/stats', { ...c.params, groupBy: 'dataset' }, token);
      t.equal(stats.total, c.expected, `${label}: /events/stats total`);
      const extent = await get(app, '/api/v1/events/bounds', c.params, token);
      t.equal(extent.count, c.expected, `${label}: /events/bounds count`);
      for (const zoom of [2, 6, 11]) {
        const geo = await get(app, '/api/v1/events/geo', { bounds: c.box, ...c.params, zoom }, token);
        const mapped = (geo.features as { properties: { count?: number } }[]).reduce(
          (sum, feature) => sum + (feature.properties.count ?? 1),
          0,
        );
        const located = await get(app, '/api/v1/events', { bounds: c.box, ...c.params, limit: 1 }, token);
        t.equal(
          mapped,
          located.pagination.totalDocs,
          `${label}: /events/geo at zoom ${zoom} sums to /events`,
        );
      }
    }
    const located = await truth(pool, { box: WORLD });
    const geo = await get(app, '/api/v1/events/geo', { bounds: WORLD, zoom: 3 }, token);
    const mapped = (geo.features as { properties: { count?: number } }[]).reduce(
      (sum, feature) => sum + (feature.properties.count ?? 1),
      0,
    );
    t.equal(mapped, located, `${when}, ${who}: the world map counts every located event`);
    const sources = await get(app, '/api/v1/data-sources', {}, token);
    const listed = (sources.catalogs ?? sources).flatMap(
      (catalog: { datasets: { id: number; eventCount: number }[] }) => catalog.datasets,
    );
    t.equal(
      listed.find((d: { id: number }) => d.id === datasetId)?.eventCount,
      await truth(pool, { datasetId }),
      `${when}, ${who}: /data-sources counts the dataset`,
    );
  }
}

t.test(
  'an import into an empty dataset defers its counts; reads stay exact; the refresh adds them',
  async (t) => {
    const { app, db, catalogId, deps, queued, adminToken } = await setup(t);
    const store = postgresEventStore(db.pool);
    // Events counted by the triggers, in the same catalog and cells (one spot shared with the import).
    const other = await ensureDataset(db.pool, catalogId, {
      slug: 'counted',
      title: 'Counted',
      isPublic: true,
    });
    await store.insertEvents(other, events('c', 60));
    await assertCountTablesExact(t, db.pool, 'before the import');

    const small = await runImport(app, deps, catalogId, {
      name: 'small.csv',
      content: csv('s', MIN_ROWS - 1),
    });
    t.equal(await pending(db.pool, small), false, 'an import below the threshold is not deferred');
    t.same(queued, [], 'and queues no refresh');
    await assertCountTablesExact(t, db.pool, 'after an import below the threshold');

    const datasetId = await runImport(app, deps, catalogId, { name: 'big.csv', content: csv('b', 300) });
    t.equal(
      await pending(db.pool, datasetId),
      true,
      'an import of 300 rows into an empty dataset is deferred',
    );
    t.same(queued, [datasetId], 'create-events queued the refresh of its dataset');
    t.equal(
      await db.pool.oneFirst(sql.type(N)`
      select count(*)::int as n from event_counts where dataset_id = ${datasetId}`),
      0,
      'the count tables hold none of its events',
    );
    await assertApiExact(t, app, db.pool, datasetId, adminToken, 'while pending');

    // A writer into the pending dataset whose transaction is open when the refresh starts: the
    // refresh waits for it and then counts its events (the triggers left them out).
    const refreshed = await whileOpen(
      db.pool,
      async (tx) => {
        t.same(await storeEvents(tx, datasetId, events('w', 25), 'skip'), { inserted: 25, updated: 0 });
      },
      () => refresh(db.pool, datasetId),
      'chronomap_refresh_dataset_counts',
    );
    t.equal(refreshed, true, 'the refresh waited for the writer to commit, then ran');
    t.equal(await pending(db.pool, datasetId), false, 'the dataset is no longer pending');
    t.equal(await refresh(db.pool, datasetId), false, 'a second refresh finds nothing to do');
    await assertCountTablesExact(t, db.pool, 'after the refresh, with the concurrent writer');
    await assertApiExact(t, app, db.pool, datasetId, adminToken, 'after the refresh');

    // An import into the now non-empty dataset is not deferred: the triggers count it.
    queued.length = 0;
    await runImport(
      app,
      deps,
      catalogId,
      { name: 'more.csv', content: csv('m', 200) },
      { dataset: String(datasetId) },
    );
    t.equal(await pending(db.pool, datasetId), false, 'an import into a dataset with events is not deferred');
    t.same(queued, [], 'and queues no refresh');
    await assertCountTablesExact(t, db.pool, 'after an import into a non-empty dataset');
  },
);

t.test('a writer that waits for a refresh under way counts its own events', async (t) => {
  const { app, db, catalogId, deps } = await setup(t);
  const datasetId = await runImport(app, deps, catalogId, { name: 'big.csv', content: csv('b', 150) });
  t.equal(await pending(db.pool, datasetId), true);
  // The sweep's choice: a pending dataset whose import is over (or stopped committing batches),
  // never one whose create-events committed a batch lately.
  t.same(await deps.store.datasetsAwaitingCounts(120), [datasetId], 'the sweep would refresh it');
  await db.pool.query(sql.unsafe`
    update ingest_jobs j set stage = 'create-events' from ingest_job_stages s
    where s.ingest_job_id = j.id and s.stage = 'create-events' and j.dataset_id = ${datasetId}`);
  await db.pool.query(sql.unsafe`
    update ingest_job_stages s set status = 'in_progress', progressed_at = now() - interval '30 seconds'
    from ingest_jobs j where s.ingest_job_id = j.id and s.stage = 'create-events' and j.dataset_id = ${datasetId}`);
  t.same(await deps.store.datasetsAwaitingCounts(120), [], 'not while its import commits batches');
  await db.pool.query(sql.unsafe`
    update ingest_job_stages s set progressed_at = now() - interval '10 minutes', started_at = now() - interval '20 minutes'
    from ingest_jobs j where s.ingest_job_id = j.id and s.stage = 'create-events' and j.dataset_id = ${datasetId}`);
  t.same(await deps.store.datasetsAwaitingCounts(120), [datasetId], 'but once it has stopped for a while');
  const written = await whileOpen(
    db.pool,
    async (tx) => {
      t.equal(
        await tx.oneFirst(sql.type(Flag)`select chronomap_refresh_dataset_counts(${datasetId}) as pending`),
        true,
      );
    },
    () => storeEvents(db.pool, datasetId, events('w', 30), 'skip'),
    'insert into events',
  );
  t.same(written, { inserted: 30, updated: 0 }, 'the writer waited for the refresh (its foreign-key check)');
  t.equal(await pending(db.pool, datasetId), false);
  await assertCountTablesExact(t, db.pool, 'after a writer that waited for the refresh');
});

t.test(
  'deleting a pending dataset, or updating and deleting its events, leaves every count exact',
  async (t) => {
    const { app, db, catalogId, deps } = await setup(t);
    const store = postgresEventStore(db.pool);
    const other = await ensureDataset(db.pool, catalogId, {
      slug: 'counted',
      title: 'Counted',
      isPublic: true,
    });
    await store.insertEvents(other, events('c', 40));
    const first = await runImport(app, deps, catalogId, { name: 'one.csv', content: csv('a', 120) });
    const second = await runImport(app, deps, catalogId, { name: 'two.csv', content: csv('b', 120) });
    t.equal(await pending(db.pool, first), true);
    t.equal(await pending(db.pool, second), true);

    // One statement over a counted and a pending dataset: only the counted rows change the counts.
    await db.pool.query(sql.unsafe`
    update events set event_timestamp = event_timestamp + interval '40 days',
                      location = st_setsrid(st_makepoint(st_x(location) / 2, st_y(location) / 2), 4326)
    where id % 3 = 0 and dataset_id in (${other}, ${first})`);
    await db.pool.query(
      sql.unsafe`delete from events where id % 7 = 0 and dataset_id in (${other}, ${first})`,
    );
    await db.pool.query(sql.unsafe`delete from datasets where id = ${second}`);
    t.equal(await truth(db.pool, { datasetId: second }), 0, 'the deleted dataset took its events along');
    t.equal(await refresh(db.pool, second), false, 'a deleted dataset has nothing to refresh');
    t.equal(await refresh(db.pool, first), true);
    await assertCountTablesExact(t, db.pool, 'after updates, deletes and a deleted pending dataset');
  },
);

// Two batches at once (INGEST_DEFERRED_WRITERS): each batch's progress update is a compare-and-set
// on the stage's rows_processed, so batches commit in file order whatever order their INSERTs end in.

const Stage = row(Type.Object({ rows: Type.Number(), counters: Type.Any() }));

async function stageOf(pool: DatabasePool, jobId: number) {
  return pool.one(sql.type(Stage)`
    select rows_processed::int as rows, counters from ingest_job_stages
    where ingest_job_id = ${jobId} and stage = 'create-events'`);
}

/** Uploads a file; its job is left to the test. */
async function uploaded(app: FastifyInstance, catalogId: number, file: { name: string; content: string }) {
  const doc = ((await upload(app, catalogId, file)).json() as { doc: UploadedDoc }).doc;
  return { jobId: doc.jobs[0]?.id as number, datasetId: doc.datasets[0] as number };
}

async function eventsLike(pool: DatabasePool, datasetId: number, prefix: string): Promise<number> {
  return pool.oneFirst(sql.type(N)`
    select count(*)::int as n from events where dataset_id = ${datasetId} and unique_id like ${`${prefix}%`}`);
}

t.test('a batch moves the high-water mark only from where the batch before left it', async (t) => {
  const { app, db, catalogId, deps } = await setup(t);
  const { jobId, datasetId } = await uploaded(app, catalogId, { name: 'cas.csv', content: csv('c', 120) });
  await deps.store.startStage(jobId, 'create-events');
  // Batches are stored at once only while their dataset's counts are deferred.
  t.equal(await deps.store.deferDatasetCounts(datasetId), true);
  const delta = (stored: { inserted: number; updated: number }) => ({ created: stored.inserted });
  const progress = (rowsBefore: number, rowsProcessed: number) => ({ rowsBefore, rowsProcessed });
  // The batch before, as its transaction stands when it is about to commit (it stored its events
  // beside the later batch: it raises the data version itself, migration 0520).
  const earlier = async (tx: CommonQueryMethods) => {
    await tx.query(sql.unsafe`select set_config('chronomap.bump_data_version_later', 'on', true)`);
    await storeEvents(tx, datasetId, events('a', 40), 'skip');
    await tx.query(sql.unsafe`
      update ingest_job_stages set rows_processed = 40, counters = '{"created": 40}'
      where ingest_job_id = ${jobId} and stage = 'create-events' and rows_processed = 0`);
    await tx.query(sql.unsafe`
      insert into dataset_data_versions (dataset_id, version) values (${datasetId}, 1)
      on conflict (dataset_id) do update set version = dataset_data_versions.version + 1`);
  };
  // The later batch, stored beside it; its wait for the earlier's commit is left to the database.
  const later = () =>
    deps.store.commitEventBatch(jobId, datasetId, events('b', 40), 'skip', progress(40, 80), delta, {
      ready: async () => {},
    });
  const version = () =>
    db.pool.maybeOneFirst(sql.type(N)`
      select version::int as n from dataset_data_versions where dataset_id = ${datasetId}`);

  const failed = await whileOpen(
    db.pool,
    earlier,
    () =>
      later().then(
        () => null,
        (error: unknown) => error,
      ),
    'ingest_job_stages where ingest_job_id',
    'rollback',
  );
  t.match(
    failed,
    { code: 'BATCH_OUT_OF_ORDER', classification: 'recoverable' },
    'the earlier rolled back: so does the later',
  );
  t.same(await stageOf(db.pool, jobId), { rows: 0, counters: {} }, 'the high-water mark did not move');
  t.equal(await eventsLike(db.pool, datasetId, 'a'), 0, 'no event of the earlier batch');
  t.equal(await eventsLike(db.pool, datasetId, 'b'), 0, 'no event of the later batch');
  t.equal(await version(), null, 'no data version raised');

  const stored = await whileOpen(db.pool, earlier, later, 'ingest_job_stages where ingest_job_id');
  t.same(
    stored,
    { inserted: 40, updated: 0, counters: { created: 80 } },
    'its counters added to the committed ones',
  );
  t.same(
    await stageOf(db.pool, jobId),
    { rows: 80, counters: { created: 80 } },
    'the earlier committed: the later follows it',
  );
  t.equal(await eventsLike(db.pool, datasetId, 'b'), 40);
  t.equal(await version(), 2, 'each batch raised the data version once');

  await t.rejects(
    deps.store.commitEventBatch(jobId, datasetId, events('d', 40), 'skip', progress(40, 120), delta),
    { code: 'BATCH_OUT_OF_ORDER' },
    'a batch that continues from a row the stage has passed stores nothing',
  );
  t.equal(await eventsLike(db.pool, datasetId, 'd'), 0);
  t.same(await stageOf(db.pool, jobId), { rows: 80, counters: { created: 80 } });
});

t.test(
  'two batches at once: a batch that fails takes the one stored beside it along; the import resumes exactly',
  async (t) => {
    const { app, db, catalogId, deps } = await setup(t);
    const { jobId, datasetId } = await uploaded(app, catalogId, { name: 'two.csv', content: csv('t', 300) });
    // The real store, with waits and a failure injected inside a batch's transaction once its
    // events are stored: batch 1 goes on only when batch 2 has stored its events too (so batch 2's
    // INSERT ends first), and batch 4 fails once batch 5 has stored its events.
    const stored = new Map<number, () => void>();
    const storedToo = new Map<number, Promise<void>>();
    for (let rowsBefore = 0; rowsBefore < 300; rowsBefore += 40)
      storedToo.set(rowsBefore, new Promise<void>((resolve) => stored.set(rowsBefore, resolve)));
    let inFlight = 0;
    let most = 0;
    let fail = true;
    const store: IngestStore = {
      ...deps.store,
      async commitEventBatch(jobId, datasetId, batch, handling, progress, delta, order) {
        inFlight += 1;
        most = Math.max(most, inFlight);
        const ready = async () => {
          stored.get(progress.rowsBefore)?.();
          if (progress.rowsBefore === 0 || (progress.rowsBefore === 120 && fail))
            await storedToo.get(progress.rowsBefore + 40);
          if (progress.rowsBefore === 120 && fail) throw transient('INJECTED', 'batch 4 failed');
          await order?.ready();
        };
        try {
          return await deps.store.commitEventBatch(jobId, datasetId, batch, handling, progress, delta, {
            ready,
          });
        } finally {
          inFlight -= 1;
        }
      },
    };
    const outcome = await runIngestJob({ ...deps, store }, jobId);
    t.equal(outcome, 'retry-scheduled', 'the failure is recoverable');
    t.equal(most, 2, 'two batches were stored at once');
    t.same(
      await stageOf(db.pool, jobId),
      { rows: 120, counters: { created: 120, updated: 0, duplicates: 0, invalid: 0, geocoded: 0 } },
      'the high-water mark and the counters are those of batches 1-3',
    );
    t.equal(await truth(db.pool, { datasetId }), 120, 'batch 5, stored beside batch 4, rolled back with it');
    t.equal(
      await db.pool.oneFirst(sql.type(N)`
        select count(*)::int as n from events
        where dataset_id = ${datasetId} and substr(unique_id, 2)::int >= 120`),
      0,
      'no event after row 120',
    );

    fail = false;
    t.equal(await runIngestJob({ ...deps, store }, jobId), 'completed', 'the import resumes');
    t.same(await stageOf(db.pool, jobId), {
      rows: 300,
      counters: { created: 300, updated: 0, duplicates: 0, invalid: 0, geocoded: 0 },
    });
    t.equal(await truth(db.pool, { datasetId }), 300, 'every row once');
    t.equal(
      await db.pool.oneFirst(sql.type(N)`
        select version::int as n from dataset_data_versions where dataset_id = ${datasetId}`),
      8,
      'each committed batch raised the data version once (migration 0520)',
    );
    t.equal(await pending(db.pool, datasetId), true);
    t.equal(await refresh(db.pool, datasetId), true);
    await assertCountTablesExact(t, db.pool, 'after an import stored two batches at once');
  },
);

/**
 * Runs `inside` in a transaction and keeps it open until `beside` (on another connection) waits for
 * a lock in a statement like `waitsFor`; then commits it (or rolls it back), and answers what
 * `beside` gave.
 */
async function whileOpen<T>(
  pool: DatabasePool,
  inside: (tx: CommonQueryMethods) => Promise<void>,
  beside: () => Promise<T>,
  waitsFor: string,
  end: 'commit' | 'rollback' = 'commit',
): Promise<T> {
  let done: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    done = resolve;
  });
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const rolledBack = new Error('rolled back by the test');
  const transaction = pool
    .transaction(async (tx) => {
      await inside(tx);
      done();
      await gate;
      if (end === 'rollback') throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  // Awaited here, outside the transaction's callback: `beside` runs on another connection.
  await ready;
  const result = beside();
  result.catch(() => {});
  await waitForLockWait(pool, waitsFor);
  release();
  await transaction;
  return result;
}

/** Until a backend runs a statement like `query` while waiting for a lock. */
async function waitForLockWait(pool: DatabasePool, query: string): Promise<void> {
  for (;;) {
    const waiting = await pool.oneFirst(sql.type(N)`
      select count(*)::int as n from pg_stat_activity
      where wait_event_type = 'Lock' and query ilike ${`%${query}%`} and pid <> pg_backend_pid()`);
    if (waiting > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
