import { Type } from 'typebox';
import type { EventLocations } from '../../../ports/ingest/event-locations.ts';
import { type DatabasePool, row, sql } from '../database.ts';

// Locations set after an import on the events the geocoder could not place. The update's
// `location is null` is what makes a placement happen once: an event placed meanwhile (by a fix
// posted twice, or an import with duplicateHandling update) is left as it is.

/** Keys asked for per statement: an import's unplaced rows may be many. */
const CHUNK = 1000;

export function postgresEventLocations(pool: DatabasePool): EventLocations {
  return {
    async unlocatedEvents(datasetId, uniqueIds) {
      const found = new Set<string>();
      for (let i = 0; i < uniqueIds.length; i += CHUNK) {
        const rows = await pool.any(
          sql.type(row(Type.Object({ unique_id: Type.String() })))`
            select unique_id from events
            where dataset_id = ${datasetId} and location is null
              and unique_id = any(${sql.array(uniqueIds.slice(i, i + CHUNK), 'text')})`,
        );
        for (const r of rows) found.add(r.unique_id);
      }
      return found;
    },

    async placeEvents(datasetId, placements) {
      let placed = 0;
      for (let i = 0; i < placements.length; i += CHUNK) {
        const chunk = placements.slice(i, i + CHUNK);
        const rows = sql.unnest(
          chunk.map((p) => [
            p.uniqueId,
            p.location.longitude,
            p.location.latitude,
            p.locatedBy ? JSON.stringify(p.locatedBy) : null,
          ]),
          ['text', 'float8', 'float8', 'text'],
        );
        const result = await pool.query(sql.unsafe`
          update events e
          set location = ST_SetSRID(ST_MakePoint(p.longitude, p.latitude), 4326),
              located_by = p.located_by::jsonb, updated_at = now()
          from ${rows} as p(unique_id, longitude, latitude, located_by)
          where e.dataset_id = ${datasetId} and e.unique_id = p.unique_id and e.location is null`);
        placed += result.rowCount;
      }
      return placed;
    },
  };
}
