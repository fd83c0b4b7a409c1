import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';

// A small public collection `quakes` with a schema version (as an import leaves one), whose events
// exercise every typed-property conversion: numbers as numbers and as text, a word in a number
// column, boolean words, dates with and without a zone, a field named like a fixed property.

export const QUAKE_FIELDS = [
  { name: 'mag', type: 'number', nullable: true },
  { name: 'depth', type: 'integer', nullable: true },
  { name: 'place', type: 'string', nullable: true },
  { name: 'felt', type: 'boolean', nullable: true },
  { name: 'seen', type: 'date', nullable: true },
  { name: 'title', type: 'string', nullable: true },
];

export const QUAKES = [
  {
    title: 'Alpha',
    data: { mag: 4.5, depth: 10, place: 'Rome', felt: true, seen: '2024-01-02' },
    at: [12.5, 41.9],
    time: '2024-01-01T00:00:00Z',
  },
  {
    title: 'Beta',
    data: { mag: 2.1, depth: 35, place: 'Paris', felt: false, seen: '2024-02-03T10:00:00Z' },
    at: [2.35, 48.85],
    time: '2024-02-01T00:00:00Z',
  },
  {
    title: 'Gamma',
    data: { mag: '3.0', depth: 'deep', place: 'Berlin', felt: 'ja', seen: '2024-03-04 12:00' },
    at: [13.4, 52.5],
    time: '2024-03-01T00:00:00Z',
  },
  {
    title: null,
    data: { mag: null, title: 'clash', place: "O'Neil" },
    at: null,
    time: '2024-04-01T00:00:00Z',
  },
  {
    title: 'Delta',
    data: { mag: 6, depth: 5, place: 'Tokyo 100%', felt: 'no' },
    at: [139.7, 35.7],
    time: '2025-01-01T00:00:00Z',
  },
] as const;

/** Loads the quakes collection; the event ids in QUAKES' order. */
export async function loadQuakes(pool: DatabasePool): Promise<number[]> {
  const Id = row(Type.Object({ id: Type.Number() }));
  const catalog = await pool.oneFirst(sql.type(Id)`
    insert into catalogs (slug, title, is_public) values ('geo', 'Geo', true) returning id`);
  const dataset = await pool.oneFirst(sql.type(Id)`
    insert into datasets (catalog_id, slug, title, is_public) values (${catalog}, 'quakes', 'Earthquakes', true)
    returning id`);
  await pool.query(sql.unsafe`
    insert into dataset_schema_versions (dataset_id, version, fields, mapping)
    values (${dataset}, 1, ${sql.jsonb(QUAKE_FIELDS)}, '{}'::jsonb)`);
  const ids: number[] = [];
  for (const [i, quake] of QUAKES.entries()) {
    ids.push(
      await pool.oneFirst(sql.type(Id)`
        insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
        values (${dataset}, ${catalog}, ${`q${i}`}, ${quake.title}, ${sql.jsonb(quake.data as never)},
                ${quake.at === null ? null : sql.fragment`st_setsrid(st_makepoint(${quake.at[0]}, ${quake.at[1]}), 4326)`},
                ${quake.time})
        returning id`),
    );
  }
  return ids;
}
