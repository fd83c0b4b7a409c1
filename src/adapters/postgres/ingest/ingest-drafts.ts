import { Type } from 'typebox';
import type { IngestDraft, IngestDrafts } from '../../../ports/ingest/ingest-drafts.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';

// The import wizard's waiting uploads (migration 0710_ingest_drafts.sql).

const DraftRow = row(
  Type.Object({
    id: Type.Number(),
    uploaded_by: Type.Number(),
    catalog_id: Type.Number(),
    original_name: Type.String(),
    stored_path: Type.String(),
    size_bytes: Type.Number(),
    sha256: Nullable(Type.String()),
    mime_type: Nullable(Type.String()),
    format: Type.String(),
    sheets: Type.Any(),
    settings: Type.Any(),
    configured_at: Nullable(Type.String()),
    started_file_id: Nullable(Type.Number()),
    started_at: Nullable(Type.String()),
    expires_at: Type.String(),
    created_at: Type.String(),
  }),
);

const columns = sql.fragment`id, uploaded_by, catalog_id, original_name, stored_path, size_bytes, sha256, mime_type,
  format, sheets, settings, configured_at, started_file_id, started_at, expires_at, created_at`;

function toDraft(r: Record<string, unknown>): IngestDraft {
  return {
    id: r.id as number,
    uploadedBy: r.uploaded_by as number,
    catalogId: r.catalog_id as number,
    originalName: r.original_name as string,
    storedPath: r.stored_path as string,
    sizeBytes: r.size_bytes as number,
    sha256: r.sha256 as string | null,
    mimeType: r.mime_type as string | null,
    format: r.format as IngestDraft['format'],
    sheets: r.sheets as (string | null)[],
    configuration: (r.settings ?? {}) as IngestDraft['configuration'],
    configuredAt: r.configured_at as string | null,
    startedFileId: r.started_file_id as number | null,
    startedAt: r.started_at as string | null,
    expiresAt: r.expires_at as string,
    createdAt: r.created_at as string,
  };
}

export function postgresIngestDrafts(pool: DatabasePool): IngestDrafts {
  return {
    async create(d) {
      return toDraft(
        await pool.one(sql.type(DraftRow)`
          insert into ingest_drafts (uploaded_by, catalog_id, original_name, stored_path, size_bytes, mime_type, format,
                                     sheets, settings, expires_at, sha256)
          values (${d.uploadedBy}, ${d.catalogId}, ${d.originalName}, ${d.storedPath}, ${d.sizeBytes}, ${d.mimeType},
                  ${d.format}, ${sql.jsonb(d.sheets)}, ${sql.jsonb(d.configuration as never)}, ${d.expiresAt},
                  ${d.sha256 ?? null})
          returning ${columns}`),
      );
    },
    async get(id) {
      const found = await pool.maybeOne(
        sql.type(DraftRow)`select ${columns} from ingest_drafts where id = ${id}`,
      );
      return found ? toDraft(found) : null;
    },
    async configure(id, configuration) {
      const updated = await pool.maybeOne(sql.type(DraftRow)`
        update ingest_drafts set settings = ${sql.jsonb(configuration as never)}, configured_at = now()
        where id = ${id} and started_at is null returning ${columns}`);
      return updated ? toDraft(updated) : null;
    },
    async claimStart(id) {
      const claimed = await pool.maybeOne(sql.type(row(Type.Object({ id: Type.Number() })))`
        update ingest_drafts set started_at = now() where id = ${id} and started_at is null returning id`);
      return claimed !== null;
    },
    async releaseStart(id) {
      await pool.query(
        sql.unsafe`update ingest_drafts set started_at = null where id = ${id} and started_file_id is null`,
      );
    },
    async recordStartedFile(id, fileId) {
      await pool.query(sql.unsafe`update ingest_drafts set started_file_id = ${fileId} where id = ${id}`);
    },
    async expired(now, limit) {
      const rows = await pool.any(sql.type(DraftRow)`
        select ${columns} from ingest_drafts
        where started_at is null and expires_at <= ${now.toISOString()} order by expires_at limit ${limit}`);
      return rows.map(toDraft);
    },
    async remove(id) {
      await pool.query(sql.unsafe`delete from ingest_drafts where id = ${id}`);
    },
  };
}
