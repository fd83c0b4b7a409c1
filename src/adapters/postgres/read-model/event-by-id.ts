import { Type } from 'typebox';
import type { EventReader } from '../../../ports/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { sqlText, typed } from '../sql-text.ts';
import { visibility } from './scope.ts';

// One event of one dataset, for OGC API – Features' items/{featureId}: by primary key, with the
// dataset named by its slug and the viewer's visibility in the same statement, so an event of
// another dataset, or of a dataset the viewer may not read, is simply not found.

const EventRow = row(
  Type.Object({
    id: Type.Number(),
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

export function eventByIdReads(pool: DatabasePool): Pick<EventReader, 'eventInDataset'> {
  return {
    async eventInDataset(viewer, datasetSlug, eventId) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const found = await pool.maybeOne(typed(EventRow)`
        select e.id, e.dataset_id, d.title as dataset_title, c.slug as catalog_slug, e.data,
               st_x(e.location) as longitude, st_y(e.location) as latitude,
               to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as event_timestamp,
               e.is_valid
        from events e join datasets d on d.id = e.dataset_id join catalogs c on c.id = d.catalog_id
        where e.id = ${eventId} and d.slug = ${datasetSlug} and ${visible}`);
      if (!found) return null;
      return {
        id: found.id,
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
