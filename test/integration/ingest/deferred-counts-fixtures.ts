import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { Type } from 'typebox';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { localSourceFiles } from '../../../src/adapters/files/local-source-files.ts';
import { pgBossIngestQueue } from '../../../src/adapters/jobs/ingest-worker.ts';
import type { DatabasePool } from '../../../src/adapters/postgres/database.ts';
import type { CommonQueryMethods } from 'slonik';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresIngestStore } from '../../../src/adapters/postgres/ingest/ingest-store.ts';
import { type IngestDeps, runIngestJob } from '../../../src/application/ingest/run-ingest-job.ts';
import type { NewEvent } from '../../../src/domain/read/events.ts';
import { signIn, type UploadedDoc, upload } from '../../fixtures/ingest/client.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { unlimitedQuotas } from '../../helpers/quotas.ts';
import { ensureCatalog } from '../../helpers/collections.ts';

// The setup and the exact-count checks shared by the deferred-counts tests
// (ingest-deferred-counts.test.ts, ingest-deferred-counts-batches.test.ts).

export const MIN_ROWS = 100;
export const WORLD = { north: 85, south: -85, east: 180, west: -180 };
export const EUROPE = { north: 60, south: 35, east: 30, west: -10 };
export const SPOT = { longitude: 13.405, latitude: 52.52 };

export const N = row(Type.Object({ n: Type.Number() }));
export const Flag = row(Type.Object({ pending: Type.Boolean() }));

/** Rows spread over the world and two years, a few at one spot, every tenth without coordinates. */
export function csv(prefix: string, rows: number): string {
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

export function events(prefix: string, count: number, offset = 0): NewEvent[] {
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

export async function setup(t: Test) {
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
export async function runImport(
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

export async function pending(pool: DatabasePool, datasetId: number): Promise<boolean> {
  return pool.oneFirst(
    sql.type(Flag)`select counts_pending as pending from datasets where id = ${datasetId}`,
  );
}

export async function refresh(pool: DatabasePool, datasetId: number): Promise<boolean> {
  return pool.oneFirst(sql.type(Flag)`select chronomap_refresh_dataset_counts(${datasetId}) as pending`);
}

export type Box = { north: number; south: number; east: number; west: number };

/** What the rows say: events matching an optional dataset, box and window. */
export async function truth(
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
export type Body = any;

export async function get(
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
export async function assertApiExact(
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

export const Stage = row(Type.Object({ rows: Type.Number(), counters: Type.Any() }));

export async function stageOf(pool: DatabasePool, jobId: number) {
  return pool.one(sql.type(Stage)`
    select rows_processed::int as rows, counters from ingest_job_stages
    where ingest_job_id = ${jobId} and stage = 'create-events'`);
}

/** Uploads a file; its job is left to the test. */
export async function uploaded(
  app: FastifyInstance,
  catalogId: number,
  file: { name: string; content: string },
) {
  const doc = ((await upload(app, catalogId, file)).json() as { doc: UploadedDoc }).doc;
  return { jobId: doc.jobs[0]?.id as number, datasetId: doc.datasets[0] as number };
}

export async function eventsLike(pool: DatabasePool, datasetId: number, prefix: string): Promise<number> {
  return pool.oneFirst(sql.type(N)`
    select count(*)::int as n from events where dataset_id = ${datasetId} and unique_id like ${`${prefix}%`}`);
}

/**
 * Runs `inside` in a transaction and keeps it open until `beside` (on another connection) waits for
 * a lock in a statement like `waitsFor`; then commits it (or rolls it back), and answers what
 * `beside` gave.
 */
export async function whileOpen<T>(
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
