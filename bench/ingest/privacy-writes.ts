// What location privacy (issue 38 §4) costs an import, next to the same import without it, in one
// run: the same events appended in batches (one transaction each, as create-events writes them)
// to a dataset without privacy, to a private one (1 km cells, k = 3) with today's triggers, which
// recompute only the cells a batch touched (migration 0960), and to a private one recomputed whole
// after every batch, as migration 0880 did (the baseline: chronomap_refresh_public_locations in the
// batch's transaction, on top of
// today's triggers, so it is 0880's cost plus the small incremental one); then a bulk import into an empty private dataset whose counts are deferred,
// which writes no locations until its refresh recomputes it once. Each dataset already holds
// `--existing` events (an import that appends), spread over Europe.
//
//   npx node bench/ingest/privacy-writes.ts [--existing 20000] [--rows 10000] [--batch 1000]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ensureDatabase } from '../../src/adapters/postgres/embedded-cluster.ts';
import { createDatabasePool } from '../../src/adapters/postgres/database.ts';
import { postgresDeferredCounts } from '../../src/adapters/postgres/ingest/ingest-datasets.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { benchDatabaseUrl } from '../read-api/bench-database.ts';
import { loadAverage } from '../read-api/measure.ts';

const { values } = parseArgs({
  options: {
    existing: { type: 'string', default: '20000' },
    rows: { type: 'string', default: '10000' },
    batch: { type: 'string', default: '1000' },
  },
});
const existing = Number(values.existing);
const rows = Number(values.rows);
const batch = Number(values.batch);

// A database of its own beside the benchmark's (its name says bench, as bench-database.ts requires).
const base = new URL(await benchDatabaseUrl());
const url = new URL(base);
url.pathname = '/chronomap_bench_privacy_writes';
await ensureDatabase(base.toString().replace(/\/[^/]*$/, '/postgres'), 'chronomap_bench_privacy_writes');
await migrate(url.toString(), loadMigrations(), () => {});
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();

const INSERT = `
  insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
  select d.id, d.catalog_id, d.slug || '-' || i, 'event ' || i, '{}'::jsonb,
         st_setsrid(st_makepoint(-5 + 25 * (hashint4(i) & 65535) / 65535.0,
                                 40 + 15 * (hashint4(i * 7) & 65535) / 65535.0), 4326),
         timestamptz '2025-01-01' + (i % 365) * interval '1 day'
  from datasets d, generate_series($2::int, $3::int) i where d.slug = $1`;

await client.query(`truncate catalogs cascade`);
await client.query(`
  with cat as (insert into catalogs (slug, title, is_public) values ('bench', 'Bench', true) returning id)
  insert into datasets (catalog_id, slug, title, is_public)
  select id, s, s, true from cat, unnest(array['exact', 'cells', 'whole', 'bulk']) s`);
for (const slug of ['exact', 'cells', 'whole']) await client.query(INSERT, [slug, 1, existing]);
await client.query(`
  update datasets set privacy_cell_metres = 1000, privacy_min_count = 3 where slug in ('cells', 'whole', 'bulk')`);
await client.query(`select chronomap_refresh_dataset_counts(id) from datasets`);
await client.query('analyze events');

/** Seconds to append `rows` events in batches, each batch a transaction; `after` runs inside it. */
async function append(slug: string, after?: string): Promise<number> {
  const started = process.hrtime.bigint();
  for (let first = existing + 1; first <= existing + rows; first += batch) {
    await client.query('begin');
    await client.query(INSERT, [slug, first, Math.min(first + batch - 1, existing + rows)]);
    if (after) await client.query(after, [slug]);
    await client.query('commit');
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

const line = (name: string, seconds: number, exact: number) =>
  console.log(`| ${name} | ${seconds.toFixed(2)} | ${(seconds / exact).toFixed(2)}× |`);

console.log(
  `privacy writes: ${rows} events in batches of ${batch} onto ${existing} per dataset, load ${loadAverage()}`,
);
console.log('| import | seconds | vs without privacy |');
console.log('|---|---|---|');
const exact = await append('exact');
line('without privacy', exact, exact);
line('privacy, cells a batch touched (0960)', await append('cells'), exact);
line(
  'privacy, whole dataset per batch (0880, baseline)',
  await append('whole', `select chronomap_refresh_public_locations(id) from datasets where slug = $1`),
  exact,
);

// The bulk import: an empty private dataset with deferred counts, then its one refresh.
const pool = await createDatabasePool(url.toString(), { maximumPoolSize: 2 });
const deferred = postgresDeferredCounts(pool);
const bulkId = Number((await client.query(`select id from datasets where slug = 'bulk'`)).rows[0].id);
if (!(await deferred.deferDatasetCounts(bulkId))) throw new Error('the bulk dataset did not defer');
const bulkStarted = process.hrtime.bigint();
const bulkRows = await append('bulk');
const refreshStarted = process.hrtime.bigint();
await deferred.refreshDatasetCounts(bulkId);
const refresh = Number(process.hrtime.bigint() - refreshStarted) / 1e9;
line('privacy, deferred bulk import (batches)', bulkRows, exact);
line('  + its refresh (counts and locations once)', refresh, exact);
console.log(
  `bulk import in all: ${(Number(process.hrtime.bigint() - bulkStarted) / 1e9).toFixed(2)} s; load ${loadAverage()}`,
);
const { rows: check } = await client.query(`
  select d.slug, count(e.public_location) as placed, count(*) as events
  from datasets d join events e on e.dataset_id = d.id group by d.slug order by d.slug`);
console.log(check.map((r) => `${r.slug}: ${r.placed}/${r.events} placed`).join('; '));
await pool.end();
await client.end();
