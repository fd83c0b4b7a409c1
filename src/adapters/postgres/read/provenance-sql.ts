import { type Sql, sqlText } from '../sql-text.ts';

// An event's provenance (issue 38 §5, migration 0890) as the lists and exports write it, from the
// event's own row (`e`) and its dataset's setting (`d.provenance_public`): the import job, the data
// row and the times. Its source (file, URL, run) is the one event's (/api/v1/events/{id}).

const iso = (column: Sql) => sqlText`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The `provenance` object of /api/v1/events and the GeoJSON exports; `{"shown":false}` when hidden. */
export const provenanceJson = sqlText`case when d.provenance_public then
    '{"shown":true,"importJob":' || coalesce(e.ingest_job_id::text, 'null')
    || ',"row":' || coalesce(e.source_row::text, 'null')
    || ',"storedAt":"' || ${iso(sqlText`e.created_at`)}
    || '","changedAt":"' || ${iso(sqlText`e.updated_at`)}
    || '","page":"/events/' || e.id || '/provenance"}'
  else '{"shown":false}' end`;

/** The CSV export's provenance columns (PROVENANCE_CSV_COLUMNS), each empty when hidden or unknown. */
export const PROVENANCE_CSV_COLUMNS = ['importJob', 'sourceRow', 'storedAt', 'changedAt'];

export const provenanceCsv = sqlText`case when d.provenance_public then
    coalesce(e.ingest_job_id::text, '') || ',' || coalesce(e.source_row::text, '') || ','
    || ${iso(sqlText`e.created_at`)} || ',' || ${iso(sqlText`e.updated_at`)}
  else ',,,' end`;
