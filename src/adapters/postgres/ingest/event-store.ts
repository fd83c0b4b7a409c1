import type { CommonQueryMethods } from 'slonik';
import { Type } from 'typebox';
import type { NewEvent } from '../../../domain/read/events.ts';
import type { EventStore } from '../../../ports/ingest/event-store.ts';
import { type DatabasePool, row, sql } from '../database.ts';

const Id = row(Type.Object({ id: Type.Number() }));

export function postgresEventStore(pool: DatabasePool): EventStore {
  return {
    async ensureCatalog(catalog) {
      // The no-op update makes RETURNING yield the existing row's id on conflict.
      return pool.oneFirst(sql.type(Id)`
        insert into catalogs (slug, title, description, is_public)
        values (${catalog.slug}, ${catalog.title}, ${catalog.description ?? null}, ${catalog.isPublic})
        on conflict (slug) do update set slug = excluded.slug
        returning id`);
    },

    async ensureDataset(catalogId, dataset) {
      return pool.oneFirst(sql.type(Id)`
        insert into datasets (catalog_id, slug, title, description, is_public)
        values (${catalogId}, ${dataset.slug}, ${dataset.title}, ${dataset.description ?? null}, ${dataset.isPublic})
        on conflict (slug) do update set slug = excluded.slug
        returning id`);
    },

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
 * content when it differs. Runs on a pool or inside a caller's transaction.
 */
export async function storeEvents(
  connection: CommonQueryMethods,
  datasetId: number,
  events: NewEvent[],
  handling: 'skip' | 'update',
): Promise<{ inserted: number; updated: number }> {
  if (events.length === 0) return { inserted: 0, updated: 0 };
  const onConflict =
    handling === 'skip'
      ? sql.fragment`do nothing`
      : sql.fragment`do update set title = excluded.title, data = excluded.data, location = excluded.location,
          located_by = excluded.located_by,
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
        ]),
        ['text', 'text', 'text', 'float8', 'float8', 'timestamptz', 'bool', 'text'],
      )} as t(unique_id, title, data, longitude, latitude, event_timestamp, is_valid, located_by)
    ), stored as (
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp, is_valid,
                          located_by)
      select ${datasetId}, d.catalog_id, i.unique_id, i.title, i.data::jsonb,
             case when i.longitude is null then null
                  else ST_SetSRID(ST_MakePoint(i.longitude, i.latitude), 4326) end,
             i.event_timestamp, i.is_valid, i.located_by::jsonb
      from input i cross join (select catalog_id from datasets where id = ${datasetId}) d
      on conflict (dataset_id, unique_id) ${onConflict}
      returning (xmax = 0) as inserted
    )
    select count(*) filter (where inserted)::int as inserted,
           count(*) filter (where not inserted)::int as updated
    from stored`);
}
