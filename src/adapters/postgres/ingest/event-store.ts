import type { CommonQueryMethods } from 'slonik';
import { Type } from 'typebox';
import type { NewEvent } from '../../../domain/read/events.ts';
import type { EventStore } from '../../../ports/ingest/event-store.ts';
import { type DatabasePool, row, sql } from '../database.ts';

const Id = row(Type.Object({ id: Type.Number() }));

/** Slugs tried for a collection of the service's before giving up: `slug`, `slug-2`, ... */
const FREE_SLUG_ATTEMPTS = 50;

type Described = { slug: string; title: string; description?: string; isPublic: boolean };

/**
 * The catalog or dataset the service keeps under `key` (migration 0750): found by the key, else
 * inserted with the first free slug. `on conflict do nothing` covers both a taken slug (try the
 * next) and a concurrent seed that inserted the key first (found on the next look-up).
 */
async function ensureSystemRow(
  pool: DatabasePool,
  key: string,
  row: Described,
  parent: { catalogId: number } | null,
): Promise<number> {
  const table = sql.identifier([parent ? 'datasets' : 'catalogs']);
  const [parentColumn, parentValue] = parent
    ? [sql.fragment`catalog_id,`, sql.fragment`${parent.catalogId},`]
    : [sql.fragment``, sql.fragment``];
  for (let attempt = 1; attempt <= FREE_SLUG_ATTEMPTS; attempt += 1) {
    const found = await pool.maybeOneFirst(sql.type(Id)`select id from ${table} where system_key = ${key}`);
    if (found !== null) return found;
    const slug = attempt === 1 ? row.slug : `${row.slug}-${attempt}`;
    const inserted = await pool.maybeOneFirst(sql.type(Id)`
      insert into ${table} (${parentColumn} slug, title, description, is_public, system_key)
      values (${parentValue} ${slug}, ${row.title}, ${row.description ?? null}, ${row.isPublic}, ${key})
      on conflict do nothing
      returning id`);
    if (inserted !== null) return inserted;
  }
  throw new Error(
    `no free slug for ${key} after ${FREE_SLUG_ATTEMPTS} tries (${row.slug}, ${row.slug}-2, ...)`,
  );
}

export function postgresEventStore(pool: DatabasePool): EventStore {
  return {
    ensureSystemCatalog: (key, catalog) => ensureSystemRow(pool, key, catalog, null),
    ensureSystemDataset: (key, catalogId, dataset) => ensureSystemRow(pool, key, dataset, { catalogId }),

    async insertEvents(datasetId, events) {
      const { inserted } = await storeEvents(pool, datasetId, events, 'skip');
      return { inserted };
    },
  };
}

const Stored = row(Type.Object({ inserted: Type.Number(), updated: Type.Number() }));

/**
 * Stores a batch in one statement (`unnest`, never row by row). The unique key (dataset_id,
 * unique_id) decides what is a duplicate: `skip` leaves the stored event alone, `update` replaces its
 * content when it differs. Runs on a pool or inside a caller's transaction. With `jobId` (an
 * import's batch) each event keeps its provenance (migration 0890): the job and its `sourceRow`;
 * an update that changes the content takes the new job's.
 */
export async function storeEvents(
  connection: CommonQueryMethods,
  datasetId: number,
  events: NewEvent[],
  handling: 'skip' | 'update',
  jobId: number | null = null,
): Promise<{ inserted: number; updated: number }> {
  if (events.length === 0) return { inserted: 0, updated: 0 };
  const onConflict =
    handling === 'skip'
      ? sql.fragment`do nothing`
      : sql.fragment`do update set title = excluded.title, data = excluded.data, location = excluded.location,
          located_by = excluded.located_by, ingest_job_id = excluded.ingest_job_id,
          source_row = excluded.source_row,
          event_timestamp = excluded.event_timestamp, is_valid = excluded.is_valid, updated_at = now()
        where (events.title, events.data, events.event_timestamp, events.is_valid, events.located_by)
              is distinct from (excluded.title, excluded.data, excluded.event_timestamp, excluded.is_valid,
                                excluded.located_by)
           or not (events.location is not distinct from excluded.location)`;
  return connection.one(sql.type(Stored)`
    with input as (
      select * from ${sql.unnest(
        events.map((event) => [
          event.uniqueId,
          event.title,
          JSON.stringify(event.data),
          event.location?.longitude ?? null,
          event.location?.latitude ?? null,
          event.eventTimestamp,
          event.isValid,
          event.locatedBy ? JSON.stringify(event.locatedBy) : null,
          event.sourceRow ?? null,
        ]),
        ['text', 'text', 'text', 'float8', 'float8', 'timestamptz', 'bool', 'text', 'int4'],
      )} as t(unique_id, title, data, longitude, latitude, event_timestamp, is_valid, located_by, source_row)
    ), stored as (
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp, is_valid,
                          located_by, ingest_job_id, source_row)
      select ${datasetId}, d.catalog_id, i.unique_id, i.title, i.data::jsonb,
             case when i.longitude is null then null
                  else ST_SetSRID(ST_MakePoint(i.longitude, i.latitude), 4326) end,
             i.event_timestamp, i.is_valid, i.located_by::jsonb, ${jobId}::int8, i.source_row
      from input i cross join (select catalog_id from datasets where id = ${datasetId}) d
      on conflict (dataset_id, unique_id) ${onConflict}
      returning (xmax = 0) as inserted
    )
    select count(*) filter (where inserted)::int as inserted,
           count(*) filter (where not inserted)::int as updated
    from stored`);
}
