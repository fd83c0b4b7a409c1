// The two outputs of the real-shaped events (world-shape.ts): rows of the bench database, through
// the ordinary events table and its count triggers, or a CSV file for the ingest bench.
import { writeLines } from '../csv-lines.ts';
import type pg from 'pg';
import { WORLD_CSV_HEADER, eventFields, worldCsvLine, worldEvents } from './world-shape.ts';

const INSERT_BATCH = 50_000;
const DATASETS = 20;

export async function writeWorldCsv(file: string, count: number): Promise<void> {
  await writeLines(
    file,
    WORLD_CSV_HEADER,
    (function* () {
      for (const event of worldEvents(count)) yield worldCsvLine(event);
    })(),
  );
}

/** Stores `count` real-shaped events in the bench database's datasets (skewed sizes, as the 60-city set). */
export async function insertWorldEvents(
  client: pg.Client,
  count: number,
  log: (line: string) => void,
): Promise<void> {
  const started = performance.now();
  let columns = emptyColumns();
  const flush = async () => {
    await client.query(
      `with ds as (select id, catalog_id, row_number() over (order by id) as n from datasets)
       insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
       select d.id, d.catalog_id, t.unique_id, t.name || ' event ' || t.unique_id,
              jsonb_build_object('category', t.category, 'value', t.value, 'city', t.name,
                                 'startDate', to_char(t.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
              case when t.lon is null then null else st_setsrid(st_makepoint(t.lon, t.lat), 4326) end,
              t.at
       from unnest($1::text[], $2::text[], $3::float8[], $4::float8[], $5::timestamptz[], $6::text[], $7::int[], $8::int[])
              as t(unique_id, name, lon, lat, at, category, value, dataset)
       join ds d on d.n = t.dataset`,
      [
        columns.id,
        columns.name,
        columns.lon,
        columns.lat,
        columns.at,
        columns.category,
        columns.value,
        columns.dataset,
      ],
    );
    columns = emptyColumns();
  };
  for (const event of worldEvents(count)) {
    const { category, value } = eventFields(event);
    columns.id.push(`w${event.index}`);
    columns.name.push(event.name);
    columns.lon.push(event.longitude);
    columns.lat.push(event.latitude);
    columns.at.push(event.time.toISOString());
    columns.category.push(category);
    columns.value.push(value);
    // Skewed dataset sizes (the first datasets are larger), from a pick of its own.
    columns.dataset.push(
      1 + Math.min(DATASETS - 1, Math.floor(((event.pick * 104729) % 1) ** 1.6 * DATASETS)),
    );
    if (columns.id.length === INSERT_BATCH) {
      await flush();
      const done = event.index + 1;
      log(
        `inserted ${done} / ${count} events (${Math.round(done / ((performance.now() - started) / 1000))} per second)`,
      );
    }
  }
  if (columns.id.length > 0) await flush();
}

function emptyColumns() {
  return {
    id: [] as string[],
    name: [] as string[],
    lon: [] as (number | null)[],
    lat: [] as (number | null)[],
    at: [] as string[],
    category: [] as string[],
    value: [] as number[],
    dataset: [] as number[],
  };
}
