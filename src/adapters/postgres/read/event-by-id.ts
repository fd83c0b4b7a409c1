import { Type } from 'typebox';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { sqlText, typed } from '../sql-text.ts';
import { visibleData, visibleLocation } from './private-locations.ts';
import { visibility } from './scope.ts';

// One dataset by slug, and one event of one dataset, for OGC API – Features (a collection is a
// dataset, a feature an event): by key, with the viewer's visibility in the same statement, so a
// dataset the viewer may not read, or an event of another dataset, is simply not found.

const EventRow = row(
  Type.Object({
    id: Type.Number(),
    title: Type.Union([Type.String(), Type.Null()]),
    dataset_id: Type.Number(),
    dataset_title: Type.String(),
    catalog_slug: Type.String(),
    data: Type.Record(Type.String(), Type.Unknown()),
    longitude: Type.Union([Type.Number(), Type.Null()]),
    latitude: Type.Union([Type.Number(), Type.Null()]),
    event_timestamp: Type.String(),
    is_valid: Type.Boolean(),
  }),
);

const DatasetRow = row(
  Type.Object({
    id: Type.Number(),
    slug: Type.String(),
    title: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    catalog_slug: Type.String(),
  }),
);

export function eventByIdReads(pool: DatabasePool): Pick<EventReader, 'eventInDataset' | 'readableDataset'> {
  return {
    async readableDataset(viewer, slug) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const found = await pool.maybeOne(typed(DatasetRow)`
        select d.id, d.slug, d.title, d.description, c.slug as catalog_slug
        from datasets d join catalogs c on c.id = d.catalog_id
        where d.slug = ${slug} and ${visible}`);
      return found
        ? {
            id: found.id,
            slug: found.slug,
            title: found.title,
            description: found.description,
            catalogSlug: found.catalog_slug,
          }
        : null;
    },

    async eventInDataset(viewer, datasetSlug, eventId) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const location = visibleLocation(viewer);
      const found = await pool.maybeOne(typed(EventRow)`
        select e.id, e.title, e.dataset_id, d.title as dataset_title, c.slug as catalog_slug,
               ${visibleData(viewer)} as data,
               st_x(${location}) as longitude, st_y(${location}) as latitude,
               to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as event_timestamp,
               e.is_valid
        from events e join datasets d on d.id = e.dataset_id join catalogs c on c.id = d.catalog_id
        where e.id = ${eventId} and d.slug = ${datasetSlug} and ${visible}`);
      if (!found) return null;
      return {
        id: found.id,
        title: found.title,
        dataset: { id: found.dataset_id, title: found.dataset_title, catalog: found.catalog_slug },
        data: found.data,
        location:
          found.longitude === null || found.latitude === null
            ? null
            : { longitude: found.longitude, latitude: found.latitude },
        eventTimestamp: found.event_timestamp,
        isValid: found.is_valid,
      };
    },
  };
}
