import type { Viewer } from '../../../ports/read/event-reader.ts';
import { type Sql, sqlText } from '../sql-text.ts';
import { writableDatasetCondition } from '../visibility.ts';

// Location privacy (issue 38 §4, migration 0880): what `events e` is for a read. For a viewer who may
// write every dataset of the scope, or when no dataset of it has privacy settings, the table itself
// (today's plans). Otherwise the events of the generalised datasets are read with their stored
// generalised location (`public_location`: the centre of their grid cell, null when the cell holds
// fewer than the dataset's minimum count) in place of the exact one, and their grid columns and
// geocoding details follow it, and their `data` loses the columns the location was read from
// (datasets.location_fields, migration 0885), so that every surface that reads `e.location`, `e.grid_x` or
// `e.grid_y` (lists, clusters, tiles, bounds, CQL2 and bbox filters, exports, OGC items) sees only
// the generalised location. Both branches keep their own indexes (the planner pushes the filters
// into each branch of the union).

/** `events`, or the generalised relation when the scope names datasets to generalise. */
export function eventsFrom(scope: { generalised: Sql | null }): Sql {
  if (scope.generalised === null) return sqlText`events`;
  return sqlText`(select id, dataset_id, catalog_id, unique_id, title, data, event_timestamp, is_valid,
           created_at, updated_at, ingest_job_id, source_row, location, grid_x, grid_y, located_by
      from events where not (dataset_id = any(${scope.generalised}))
    union all
    select g.id, g.dataset_id, g.catalog_id, g.unique_id, g.title, g.data - f.location_fields, g.event_timestamp,
           g.is_valid, g.created_at, g.updated_at, g.ingest_job_id, g.source_row, g.public_location,
           chronomap_mercator_x(st_x(g.public_location)), chronomap_mercator_y(st_y(g.public_location)), null::jsonb
      from events g join datasets f on f.id = g.dataset_id
      where g.dataset_id = any(${scope.generalised}))`;
}

/**
 * The location of one event `e` of dataset `d` (catalog `c` joined) as the viewer may see it: exact
 * for those who may write the dataset or when it has no privacy settings, else the generalised one.
 */
export function visibleLocation(viewer: Viewer): Sql {
  const exact = writableDatasetCondition(viewer, { dataset: 'd', catalog: 'c' });
  return sqlText`(case when d.privacy_cell_metres is null or ${exact} then e.location else e.public_location end)`;
}

/** The `data` of one event `e` of dataset `d` as the viewer may see it (visibleLocation's twin). */
export function visibleData(viewer: Viewer): Sql {
  const exact = writableDatasetCondition(viewer, { dataset: 'd', catalog: 'c' });
  return sqlText`(case when d.privacy_cell_metres is null or ${exact} then e.data else e.data - d.location_fields end)`;
}

/**
 * The datasets to generalise among those a condition on `datasets d` (catalog `c` joined) selects,
 * as an int8[] for eventsFrom; null when the viewer may write every dataset (admins).
 */
export function generalisedAmong(viewer: Viewer, condition: Sql): Sql | null {
  const exact = writableDatasetCondition(viewer, { dataset: 'd', catalog: 'c' });
  if (exact.sql === 'true') return null;
  return sqlText`array(select d.id from datasets d join catalogs c on c.id = d.catalog_id
    where ${condition} and d.privacy_cell_metres is not null and not ${exact})`;
}
