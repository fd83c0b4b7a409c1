// What location privacy (issue 38 §4) costs a reader, next to the same data without it, in one run:
// two datasets with the same events (spread over Europe, a year of timestamps), one with a 1 km
// cell and k = 3; an anonymous reader asks each for the first /events page, the map features at
// zoom 6 and 12 over a city box, and the extent, alternating, and the medians are printed side by
// side. Privacy sends its answers down the raw path (rows, not the precomputed counts), so the
// figure is that path's cost on the dataset that asked for it; the other dataset's answers are
// today's.
//
//   npx node bench/read-api/privacy-cost.ts [--events 50000] [--rounds 15]
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDatabasePool } from '../../src/adapters/postgres/database.ts';
import { ensureDatabase } from '../../src/adapters/postgres/embedded-cluster.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { postgresEventReader } from '../../src/adapters/postgres/read/index.ts';
import { parseEventFilter, parsePage } from '../../src/domain/read/read-query.ts';
import { parseEventSort } from '../../src/domain/read/sort.ts';
import { benchDatabaseUrl } from './bench-database.ts';
import { loadAverage, percentile, time } from './measure.ts';

const { values } = parseArgs({
  options: { events: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '15' } },
});
const events = Number(values.events);
const rounds = Number(values.rounds);

// A database of its own beside the benchmark's (its name says bench, as bench-database.ts requires).
const base = new URL(await benchDatabaseUrl());
const url = new URL(base);
url.pathname = '/chronomap_bench_privacy';
await ensureDatabase(base.toString().replace(/\/[^/]*$/, '/postgres'), 'chronomap_bench_privacy');
await migrate(url.toString(), loadMigrations(), () => {});

const pool = await createDatabasePool(url.toString(), { maximumPoolSize: 4 });
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
await client.query(`truncate catalogs cascade`);
await client.query(`
  with cat as (insert into catalogs (slug, title, is_public) values ('bench', 'Bench', true) returning id)
  insert into datasets (catalog_id, slug, title, is_public)
  select id, s, s, true from cat, unnest(array['exact', 'private']) s`);
await client.query(
  `insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
   select d.id, d.catalog_id, d.slug || i, 'event ' || i, '{}'::jsonb,
          st_setsrid(st_makepoint(-5 + 25 * x, 40 + 15 * y), 4326),
          timestamptz '2025-01-01' + (i % 365) * interval '1 day'
   from datasets d,
        (select i, (hashint4(i) & 65535) / 65535.0 as x, (hashint4(i * 7) & 65535) / 65535.0 as y
         from generate_series(1, $1::int) i) p`,
  [events],
);
await client.query(
  `update datasets set privacy_cell_metres = 1000, privacy_min_count = 3 where slug = 'private'`,
);
// Counts as an import leaves them (the deferred refresh after its last batch), so the dataset
// without privacy answers from them as it would in production.
await client.query(`select chronomap_refresh_dataset_counts(id) from datasets`);
await client.query(`select count(*) from datasets where counts_pending`).then(({ rows }) => {
  if (Number(rows[0].count) !== 0) throw new Error('counts still pending after the refresh');
});
await client.query('analyze events');
const reader = postgresEventReader(pool);

const city = JSON.stringify({ north: 48.95, south: 48.75, east: 2.5, west: 2.2 });
const asks: Record<string, (datasets: string) => Promise<unknown>> = {
  'first /events page': (datasets) =>
    reader.listEventsPage(null, parseEventFilter({ datasets }), parseEventSort(undefined), parsePage({}), {
      fresh: true,
    }),
  '/events/geo zoom 6 (level 6)': (datasets) =>
    reader.clusterFeatures(null, parseEventFilter({ datasets }), 6),
  '/events/geo city box, level 14': (datasets) =>
    reader.clusterFeatures(null, parseEventFilter({ datasets, bounds: city }), 14),
  '/events/bounds': (datasets) => reader.extent(null, parseEventFilter({ datasets })),
};

console.log(`privacy cost: ${events} events per dataset, ${rounds} rounds, load ${loadAverage()}`);
console.log('| ask | without privacy, median ms | with privacy (1 km, k 3), median ms | ratio |');
console.log('|---|---|---|---|');
for (const [name, ask] of Object.entries(asks)) {
  const exact: number[] = [];
  const generalised: number[] = [];
  await ask('exact');
  await ask('private');
  for (let round = 0; round < rounds; round++) {
    exact.push(await time(() => ask('exact')));
    generalised.push(await time(() => ask('private')));
  }
  const [a, b] = [percentile(exact, 0.5), percentile(generalised, 0.5)];
  console.log(`| ${name} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(b / a).toFixed(2)}× |`);
}
console.log(`load after: ${loadAverage()}`);
await client.end();
await pool.end();
