import { Type } from 'typebox';
import type { EventStore } from '../../ports/event-store.ts';
import { type DatabasePool, row, sql } from './database.ts';

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
      if (events.length === 0) return { inserted: 0 };
      const inserted = await pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
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
            ]),
            ['text', 'text', 'text', 'float8', 'float8', 'timestamptz', 'bool'],
          )} as t(unique_id, title, data, longitude, latitude, event_timestamp, is_valid)
        ), stored as (
          insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp, is_valid)
          select ${datasetId}, d.catalog_id, i.unique_id, i.title, i.data::jsonb,
                 case when i.longitude is null then null
                      else ST_SetSRID(ST_MakePoint(i.longitude, i.latitude), 4326) end,
                 i.event_timestamp, i.is_valid
          from input i cross join (select catalog_id from datasets where id = ${datasetId}) d
          on conflict (dataset_id, unique_id) do nothing
          returning 1
        )
        select count(*)::int as count from stored`);
      return { inserted };
    },
  };
}
