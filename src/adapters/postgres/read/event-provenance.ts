import { Type } from 'typebox';
import type { EventProvenanceReader } from '../../../ports/read/event-provenance.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';

// One event with its provenance (migration 0890): the event, its dataset's and catalog's access
// facts, and the job, file and scraper run it came from, by key in one statement.

const iso = (column: ReturnType<typeof sql.identifier>) =>
  sql.fragment`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const RecordRow = row(
  Type.Object({
    id: Type.Number(),
    title: Nullable(Type.String()),
    dataset_id: Type.Number(),
    dataset_title: Type.String(),
    catalog_slug: Type.String(),
    data: Type.Record(Type.String(), Type.Unknown()),
    longitude: Nullable(Type.Number()),
    latitude: Nullable(Type.Number()),
    located_by: Type.Unknown(),
    event_timestamp: Type.String(),
    is_valid: Type.Boolean(),
    catalog_id: Type.Number(),
    catalog_public: Type.Boolean(),
    catalog_owner: Nullable(Type.Number()),
    dataset_public: Type.Boolean(),
    dataset_owner: Nullable(Type.Number()),
    provenance_public: Type.Boolean(),
    ingest_job_id: Nullable(Type.Number()),
    source_row: Nullable(Type.Number()),
    stored_at: Type.String(),
    changed_at: Type.String(),
    sheet_index: Nullable(Type.Number()),
    sheet_name: Nullable(Type.String()),
    file_source: Nullable(Type.String()),
    file_name: Nullable(Type.String()),
    sha256: Nullable(Type.String()),
    source_url: Nullable(Type.String()),
    fetched_at: Nullable(Type.String()),
    etag: Nullable(Type.String()),
    last_modified: Nullable(Type.String()),
    run_id: Nullable(Type.String()),
    commit_sha: Nullable(Type.String()),
    has_privacy: Type.Boolean(),
    public_longitude: Nullable(Type.Number()),
    public_latitude: Nullable(Type.Number()),
    public_data: Type.Record(Type.String(), Type.Unknown()),
  }),
);

export function postgresEventProvenance(pool: DatabasePool): EventProvenanceReader {
  return {
    async eventRecord(eventId) {
      const r = await pool.maybeOne(sql.type(RecordRow)`
        select e.id, e.title, e.dataset_id, d.title as dataset_title, c.slug as catalog_slug, e.data,
               st_x(e.location) as longitude, st_y(e.location) as latitude,
               case when e.located_by is not null then e.located_by
                    when e.location is not null then '{"method":"coordinates"}'::jsonb end as located_by,
               ${iso(sql.identifier(['e', 'event_timestamp']))} as event_timestamp, e.is_valid,
               c.id as catalog_id, c.is_public as catalog_public, c.created_by as catalog_owner,
               d.is_public as dataset_public, d.created_by as dataset_owner, d.provenance_public,
               e.ingest_job_id, e.source_row,
               ${iso(sql.identifier(['e', 'created_at']))} as stored_at,
               ${iso(sql.identifier(['e', 'updated_at']))} as changed_at,
               j.sheet_index, j.sheet_name, f.source as file_source, f.original_name as file_name, f.sha256,
               f.source_url, ${iso(sql.identifier(['f', 'fetched_at']))} as fetched_at, f.etag, f.last_modified,
               r.run_id, r.commit_sha, d.privacy_cell_metres is not null as has_privacy,
               st_x(e.public_location) as public_longitude, st_y(e.public_location) as public_latitude,
               e.data - d.location_fields as public_data
        from events e
        join datasets d on d.id = e.dataset_id
        join catalogs c on c.id = d.catalog_id
        left join ingest_jobs j on j.id = e.ingest_job_id
        left join ingest_files f on f.id = j.ingest_file_id
        left join lateral (select s.run_id::text, s.commit_sha from scraper_runs s
                           where s.ingest_file_id = f.id order by s.id limit 1) r on true
        where e.id = ${eventId}`);
      if (!r) return null;
      return {
        event: {
          id: r.id,
          title: r.title,
          dataset: { id: r.dataset_id, title: r.dataset_title, catalog: r.catalog_slug },
          data: r.data,
          location:
            r.longitude === null || r.latitude === null
              ? null
              : { longitude: r.longitude, latitude: r.latitude },
          locatedBy: r.located_by ?? null,
          eventTimestamp: r.event_timestamp,
          isValid: r.is_valid,
        },
        access: {
          catalog: { id: r.catalog_id, isPublic: r.catalog_public, createdBy: r.catalog_owner },
          dataset: { isPublic: r.dataset_public, createdBy: r.dataset_owner },
        },
        provenancePublic: r.provenance_public,
        generalised: r.has_privacy
          ? {
              location:
                r.public_longitude === null || r.public_latitude === null
                  ? null
                  : { longitude: r.public_longitude, latitude: r.public_latitude },
              data: r.public_data,
            }
          : null,
        importJob: r.ingest_job_id,
        row: r.source_row,
        sheet: r.sheet_index === null ? null : { index: r.sheet_index, name: r.sheet_name },
        storedAt: r.stored_at,
        changedAt: r.changed_at,
        file:
          r.file_source === null
            ? null
            : {
                source: r.file_source as 'upload',
                fileName: r.file_name ?? '',
                sha256: r.sha256,
                url: r.source_url,
                fetchedAt: r.fetched_at,
                etag: r.etag,
                lastModified: r.last_modified,
                runId: r.run_id,
                commit: r.commit_sha,
              },
      };
    },
  };
}
