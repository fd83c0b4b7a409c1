// Database side of create-events alone (not a test): the same rows stored into `events` in batches
// of 20,000, one transaction each, into a dataset whose counts are deferred (docs/ingestion.md,
// "Deferred counts"), by one connection or by several at once; with the events -> datasets foreign
// key or without it (dropped in the bench's own database), with ON CONFLICT or a plain INSERT. The
// rows come from a staging table (already parsed and converted), so no Node process competes for
// the CPU: it answers whether PostgreSQL gains from a second writer on this machine.
// Run: node bench/ingest/writers-bench.ts [--rows N] [--rounds N]
// Uses DATABASE_URL's server when set, else the embedded cluster under .data/bench-postgres; creates
// and drops a database of its own.
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { ensureEmbeddedCluster } from '../../src/adapters/postgres/embedded-cluster.ts';
import { benchDurability } from './durability.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '2' } },
});
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
const BATCH = 20_000;
const say = (line: string) => process.stdout.write(`${line}\n`);
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const admin =
  process.env.DATABASE_URL ??
  (
    await ensureEmbeddedCluster({
      dataDir: path.join(projectRoot, '.data', 'bench-postgres'),
      log: say,
      durability: benchDurability(),
    })
  ).url('postgres');
const database = `chronomap_writers_${Date.now()}`;
const url = new URL(admin);
url.pathname = `/${database}`;

async function query(connection: string, text: string) {
  const client = new pg.Client({ connectionString: connection });
  await client.connect();
  try {
    return await client.query(text);
  } finally {
    await client.end();
  }
}

await query(admin, `create database ${database}`);
try {
  await migrate(url.toString(), loadMigrations());
  const file = path.join(os.tmpdir(), `chronomap-writers-${ROWS}.csv`);
  const out = createWriteStream(file);
  let chunk = 'id,time,latitude,longitude,depth,mag,place\n';
  for (let i = 0; i < ROWS; i++) {
    // The rows of bench/ingest/ingest-bench.ts.
    chunk += `ev${i},${new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString()},${((i * 7) % 17_000) / 100 - 85},${((i * 13) % 35_000) / 100 - 175},${(i % 700) / 10},${(i % 90) / 10},"${i % 1000} km N of Somewhere, Land"\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      chunk = '';
    }
  }
  out.end(chunk);
  await new Promise<void>((resolve) => out.once('close', () => resolve()));
  const bin = execFileSync('bash', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1'], {
    encoding: 'utf8',
  }).trim();
  await query(
    url.toString(),
    'create table raw (id text, time text, latitude text, longitude text, depth text, mag text, place text)',
  );
  execFileSync(path.join(bin, 'psql'), [
    url.toString(),
    '-q',
    '-v',
    'ON_ERROR_STOP=1',
    '-c',
    `\\copy raw from '${file}' csv header`,
  ]);
  await query(
    url.toString(),
    `create table staged as
       select row_number() over () as n, id as unique_id, place as title,
              jsonb_build_object('id', id, 'time', time, 'latitude', latitude::float8, 'longitude', longitude::float8,
                                 'depth', depth::float8, 'mag', mag::float8, 'place', place)::text as data,
              longitude::float8 as longitude, latitude::float8 as latitude, time::timestamptz as event_timestamp
       from raw`,
  );
  await query(url.toString(), 'create index on staged (n)');
  await query(url.toString(), 'vacuum analyze staged');
  await query(url.toString(), `insert into catalogs (slug, title, is_public) values ('c', 'C', true)`);
  say(`# ${ROWS} rows in batches of ${BATCH}, ${os.cpus().length} CPU(s), database ${database}`);

  const run = async (writers: number, conflict: boolean, label: string) => {
    await query(url.toString(), 'truncate events; delete from datasets');
    await query(url.toString(), 'checkpoint');
    const created = await query(
      url.toString(),
      `insert into datasets (catalog_id, slug, title, is_public, counts_pending)
       select id, 'd', 'D', true, true from catalogs where slug = 'c' returning id`,
    );
    const datasetId = created.rows[0].id as number;
    const clients = await Promise.all(
      Array.from({ length: writers }, async () => {
        const client = new pg.Client({ connectionString: url.toString() });
        await client.connect();
        return client;
      }),
    );
    const batches = Math.ceil(ROWS / BATCH);
    const start = performance.now();
    await Promise.all(
      clients.map(async (client, w) => {
        for (let b = w; b < batches; b += writers) {
          await client.query('begin');
          // As a batch stored beside another: the data version is raised after the INSERT (0520).
          if (writers > 1)
            await client.query(`select set_config('chronomap.bump_data_version_later', 'on', true)`);
          await client.query(`
            insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp, is_valid)
            select ${datasetId}, d.catalog_id, i.unique_id, i.title, i.data::jsonb,
                   ST_SetSRID(ST_MakePoint(i.longitude, i.latitude), 4326), i.event_timestamp, true
            from staged i cross join (select catalog_id from datasets where id = ${datasetId}) d
            where i.n > ${b * BATCH} and i.n <= ${(b + 1) * BATCH}
            ${conflict ? 'on conflict (dataset_id, unique_id) do nothing' : ''}`);
          await client.query('commit');
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    await Promise.all(clients.map((client) => client.end()));
    say(
      `${label}, ${writers} writer(s), ${conflict ? 'ON CONFLICT DO NOTHING' : 'plain INSERT'}: ${seconds.toFixed(2)} s = ${Math.round(ROWS / seconds)} rows/s; load average ${load()}`,
    );
  };

  for (let round = 1; round <= ROUNDS; round++) {
    await run(1, true, `round ${round}, with the foreign key`);
    await run(2, true, `round ${round}, with the foreign key`);
  }
  await query(url.toString(), 'alter table events drop constraint events_dataset_catalog_fkey');
  for (let round = 1; round <= ROUNDS; round++) {
    await run(1, true, `round ${round}, without the foreign key`);
    await run(2, true, `round ${round}, without the foreign key`);
    await run(1, false, `round ${round}, without the foreign key`);
  }
} finally {
  await query(admin, `drop database if exists ${database} with (force)`);
}
