// Loads the read-API benchmark data set: N events (default 1,000,000; --events 10000000 for the
// large run) around 60 real cities, over ten years, in 20 datasets of 3 catalogs, with some events
// at identical locations and some without a location. Generated inside PostgreSQL with
// generate_series (seeded, so every run builds the same data), through the ordinary events table
// and its triggers, exactly as any writer would.
//
//   node bench/read-api/generate.ts [--events 1000000] [--batch 250000] [--fresh]
//     [--shape cities|world]   cities: the 60-city set (default); world: real-shaped events
//                              (world-shape.ts: GeoNames places by population, rural noise,
//                              long-tailed time), sent from here in batches of 50,000
//     [--csv FILE]             with --shape world: write the events as a CSV file for
//                              bench/ingest (`--file FILE`) instead of storing them

import { parseArgs } from 'node:util';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { benchDatabaseUrl, withClient } from './bench-database.ts';
import { CITIES } from './cities.ts';
import { writeWorldCsv, insertWorldEvents } from './world-load.ts';

const CATALOGS = [
  { slug: 'city-data', title: 'City open data', datasets: 10, dateFields: [] as string[] },
  { slug: 'environment', title: 'Environment', datasets: 6, dateFields: [] as string[] },
  { slug: 'culture', title: 'Culture', datasets: 4, dateFields: ['startDate'] },
];

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      events: { type: 'string', default: '1000000' },
      batch: { type: 'string', default: '250000' },
      fresh: { type: 'boolean', default: false },
      shape: { type: 'string', default: 'cities' },
      csv: { type: 'string' },
    },
  });
  if (values.shape !== 'cities' && values.shape !== 'world') throw new Error('--shape is cities or world');
  const world = values.shape === 'world';
  const total = Number(values.events);
  const batch = Number(values.batch);
  if (!Number.isInteger(total) || total < 1 || !Number.isInteger(batch) || batch < 1) {
    throw new Error('--events and --batch must be positive integers');
  }
  if (values.csv) {
    if (!world) throw new Error('--csv needs --shape world');
    await writeWorldCsv(values.csv, total);
    process.stdout.write(`wrote ${total} real-shaped events to ${values.csv}\n`);
    return;
  }
  const url = await benchDatabaseUrl();
  const log = (line: string) => process.stdout.write(`${line}\n`);
  await migrate(url, loadMigrations(), log);

  await withClient(url, async (client) => {
    const existing = Number((await client.query('select count(*) as n from events')).rows[0].n);
    const shapeNow = (
      await client.query("select count(*) filter (where unique_id like 'w%') as n from events")
    ).rows[0].n;
    if (existing === total && Number(shapeNow) > 0 === world && !values.fresh) {
      log(`chronomap_bench already holds ${existing} events; --fresh rebuilds it`);
      return;
    }
    log(`clearing ${existing} events`);
    await client.query('truncate events, datasets, catalogs restart identity cascade');

    let datasetNumber = 0;
    for (const catalog of CATALOGS) {
      const { rows } = await client.query(
        'insert into catalogs (slug, title, is_public) values ($1, $2, true) returning id',
        [catalog.slug, catalog.title],
      );
      for (let i = 0; i < catalog.datasets; i++) {
        datasetNumber += 1;
        await client.query(
          `insert into datasets (catalog_id, slug, title, is_public, schema_settings)
           values ($1, $2, $3, true, $4)`,
          [
            rows[0].id,
            `${catalog.slug}-${i + 1}`,
            `${catalog.title} ${i + 1}`,
            JSON.stringify({ dateFields: catalog.dateFields }),
          ],
        );
      }
    }
    log(`${CATALOGS.length} catalogs, ${datasetNumber} datasets`);

    const cities = CITIES.map(
      ([name, lon, lat, weight], index) => `(${index}, ${sqlText(name)}, ${lon}, ${lat}, ${weight})`,
    ).join(',\n');
    const started = performance.now();
    if (world) await insertWorldEvents(client, total, log);
    for (let first = 1; !world && first <= total; first += batch) {
      const last = Math.min(total, first + batch - 1);
      await client.query(`select setseed(${(first % 997) / 997})`);
      // Each event: a dataset (skewed: the first datasets are larger), a city by weight, a
      // gaussian-ish offset of some 10-30 km, 4% snapped to a 0.001° grid (venues: events at
      // identical locations), 1% without a location, a timestamp in 2016-2025.
      await client.query(`
        with city(i, name, lon, lat, weight) as (values ${cities}),
        picks as (
          select i, sum(weight) over (order by i) - weight as low, sum(weight) over (order by i) as high,
                 sum(weight) over () as total, name, lon, lat
          from city
        ),
        ds as (select id, catalog_id, slug, row_number() over (order by id) as n from datasets),
        raw as (
          select g, random() as r_city, random() as r_ds, random() as r_venue, random() as r_none,
                 (random() + random() + random() - 1.5) as dx, (random() + random() + random() - 1.5) as dy,
                 random() as r_time, random() as r_value, random() as r_cat
          from generate_series(${first}::int8, ${last}::int8) g
        )
        insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
        select d.id, d.catalog_id, 'b' || r.g, p.name || ' event ' || r.g,
               jsonb_build_object(
                 'category', (array['traffic','weather','culture','sports','politics','health','crime','science'])[1 + floor(r.r_cat * 8)::int],
                 'value', floor(r.r_value * 1000)::int,
                 'city', p.name,
                 'startDate', to_char((timestamptz '2016-01-01' + r.r_time * interval '3652 days' + (r.r_value - 0.3) * interval '120 days') at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
               ),
               case when r.r_none < 0.01 then null
                    when r.r_venue < 0.04 then st_setsrid(st_makepoint(
                      round((p.lon + r.dx * 0.25 / cos(radians(p.lat)))::numeric, 3)::float8,
                      round((p.lat + r.dy * 0.25)::numeric, 3)::float8), 4326)
                    else st_setsrid(st_makepoint(
                      least(180, greatest(-180, p.lon + r.dx * 0.25 / cos(radians(p.lat)))),
                      p.lat + r.dy * 0.25), 4326) end,
               timestamptz '2016-01-01' + r.r_time * interval '3652 days'
        from raw r
        join picks p on r.r_city * p.total >= p.low and r.r_city * p.total < p.high
        join ds d on d.n = 1 + floor(power(r.r_ds, 1.6) * 20)::int`);
      const seconds = (performance.now() - started) / 1000;
      log(`inserted ${last} / ${total} events (${Math.round(last / seconds)} per second)`);
    }
    log('vacuum analyze');
    // Freeze, so that every page is all-visible and the covering indexes serve index-only scans.
    await client.query('vacuum (freeze, analyze) events');
    await client.query('vacuum analyze event_counts');
    await client.query('vacuum analyze event_cell_counts');
    // In key order, as migration 0236 left it for the data before it (the inserts above scattered
    // it: a city view then reads four times the pages). Its statistics also tell the reader whether
    // the level-16 counts pay (events per row).
    await client.query('cluster event_fine_cell_counts using event_fine_cell_counts_pkey');
    await client.query('vacuum analyze event_fine_cell_counts');
    await client.query('vacuum analyze event_cell_day_counts');
    const counts = (
      await client.query(`select (select count(*) from events) as events,
                                 (select count(*) from event_counts) as count_rows,
                                 (select count(*) from event_cell_counts) as cell_count_rows,
                                 (select count(*) from event_fine_cell_counts) as fine_cell_count_rows,
                                 pg_size_pretty(pg_total_relation_size('events')) as events_size`)
    ).rows[0];
    log(`done: ${JSON.stringify(counts)}`);
  });
}

function sqlText(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

await main();
