import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { datasetSlug, readableSlugCandidates } from '../../../domain/ingest/settings.ts';
import type { DeferredCounts } from '../../../ports/ingest/deferred-counts.ts';
import type { IngestDatasets } from '../../../ports/ingest/ingest-datasets.ts';
import type { SchemaVersions } from '../../../ports/ingest/schema-versions.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { Count, Exists } from './ingest-rows.ts';

// The datasets imports write to: their creation and checks, their schema versions, and their read-API
// counts deferred during a bulk import.

/** Six random hex digits: the last resort when every numbered readable slug is taken. */
const randomSuffix = () => randomBytes(3).toString('hex');

export function postgresIngestDatasets(pool: DatabasePool): IngestDatasets {
  return {
    async createDataset(catalogId, title, userId) {
      // The first free readable slug (earthquakes, earthquakes-2, ...); a taken one is skipped
      // without an error, so concurrent imports of the same name each get their own.
      for (const slug of [...readableSlugCandidates(title), datasetSlug(title, randomSuffix())]) {
        const created = await pool.maybeOne(sql.type(
          row(Type.Object({ id: Type.Number(), title: Type.String() })),
        )`
          insert into datasets (catalog_id, slug, title, created_by)
          values (${catalogId}, ${slug}, ${title}, ${userId})
          on conflict (slug) do nothing
          returning id, title`);
        if (created) return created;
      }
      throw new Error(`no free slug for dataset "${title}"`);
    },

    async datasetInCatalog(datasetId, catalogId) {
      return pool.oneFirst(sql.type(Exists)`
        select exists (select 1 from datasets where id = ${datasetId} and catalog_id = ${catalogId}) as exists`);
    },

    async catalogOfDataset(datasetId) {
      return pool.maybeOneFirst(sql.type(row(Type.Object({ catalog_id: Type.Number() })))`
        select catalog_id from datasets where id = ${datasetId}`);
    },

    async catalogExists(catalogId) {
      return pool.oneFirst(
        sql.type(Exists)`select exists (select 1 from catalogs where id = ${catalogId}) as exists`,
      );
    },

    async countExisting(datasetId, uniqueIds) {
      if (uniqueIds.length === 0) return 0;
      return pool.oneFirst(sql.type(Count)`
        select count(*)::int as count from events
        where dataset_id = ${datasetId} and unique_id = any(${sql.array(uniqueIds, 'text')})`);
    },

    async removeEmptyDataset(datasetId) {
      const removed = await pool.query(sql.unsafe`
        delete from datasets d
        where d.id = ${datasetId}
          and not exists (select 1 from events e where e.dataset_id = d.id)
          and not exists (select 1 from ingest_jobs j where j.dataset_id = d.id and j.stage <> 'failed')`);
      return removed.rowCount > 0;
    },

    async datasetHasEvents(datasetId) {
      return pool.oneFirst(
        sql.type(Exists)`select exists (select 1 from events where dataset_id = ${datasetId}) as exists`,
      );
    },
  };
}

export function postgresDeferredCounts(pool: DatabasePool): DeferredCounts {
  return {
    async deferDatasetCounts(datasetId) {
      // FOR UPDATE (not NO KEY UPDATE) waits for every writer in flight, whose foreign-key checks hold
      // KEY SHARE on the row; the check for events is a new statement, so it sees what they committed.
      return pool.transaction(async (tx) => {
        const found = await tx.maybeOne(
          sql.type(Exists)`select counts_pending as exists from datasets where id = ${datasetId} for update`,
        );
        if (!found) return false;
        if (found.exists) return true;
        const empty = !(await tx.oneFirst(
          sql.type(Exists)`select exists (select 1 from events where dataset_id = ${datasetId}) as exists`,
        ));
        if (empty)
          await tx.query(sql.unsafe`update datasets set counts_pending = true where id = ${datasetId}`);
        return empty;
      });
    },

    async datasetCountsPending(datasetId) {
      return pool.oneFirst(sql.type(Exists)`
        select exists (select 1 from datasets where id = ${datasetId} and counts_pending) as exists`);
    },

    async refreshDatasetCounts(datasetId) {
      // One pass over a whole import (a million events: minutes), beyond the pool's statement timeout.
      return pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`set local statement_timeout = 0`);
        const refreshed = await tx.oneFirst(
          sql.type(Exists)`select chronomap_refresh_dataset_counts(${datasetId}) as exists`,
        );
        // The import's generalised locations were deferred with its counts (migration 0960): one
        // recompute of the dataset, under the same row lock. Only for a dataset with privacy: without
        // it every event already has none (a change of the settings recomputes the whole dataset,
        // migration 0880), and the recompute's scan of the dataset cost 4.4 s per 300,000 events.
        if (refreshed)
          await tx.query(sql.unsafe`
            select chronomap_refresh_public_locations(id) from datasets
            where id = ${datasetId} and privacy_cell_metres is not null`);
        return refreshed;
      });
    },

    async datasetsAwaitingCounts(idleSeconds) {
      // Pending datasets that no import is writing to: none of their jobs is in create-events with
      // progress (or a start) within the last idleSeconds.
      const rows = await pool.any(sql.type(row(Type.Object({ id: Type.Number() })))`
        select d.id from datasets d
        where d.counts_pending
          and not exists (
            select 1 from ingest_jobs j
            join ingest_job_stages s on s.ingest_job_id = j.id and s.stage = 'create-events'
            where j.dataset_id = d.id and j.stage = 'create-events' and s.status = 'in_progress'
              and greatest(s.progressed_at, s.started_at) > now() - make_interval(secs => ${idleSeconds}))
        order by d.id`);
      return rows.map((r) => r.id);
    },
  };
}

export function postgresSchemaVersions(pool: DatabasePool): SchemaVersions {
  return {
    async latestSchema(datasetId) {
      const found = await pool.maybeOne(sql.type(
        row(Type.Object({ version: Type.Number(), fields: Type.Any(), mapping: Type.Any() })),
      )`
        select version, fields, mapping from dataset_schema_versions
        where dataset_id = ${datasetId} order by version desc limit 1`);
      return found ? { version: found.version, fields: found.fields, mapping: found.mapping } : null;
    },

    async createSchemaVersion(datasetId, jobId, fields, mapping) {
      // One version per job: a restarted stage finds the version it made before.
      return pool.transaction(async (tx) => {
        await tx.query(
          sql.unsafe`select pg_advisory_xact_lock(hashtext('dataset_schema_versions'), ${datasetId}::int)`,
        );
        const existing = await tx.maybeOneFirst(sql.type(row(Type.Object({ version: Type.Number() })))`
          select version from dataset_schema_versions where ingest_job_id = ${jobId}`);
        if (existing !== null) return existing;
        return tx.oneFirst(sql.type(row(Type.Object({ version: Type.Number() })))`
          insert into dataset_schema_versions (dataset_id, version, fields, mapping, ingest_job_id)
          select ${datasetId}, coalesce(max(version), 0) + 1, ${sql.jsonb(fields as never)}, ${sql.jsonb(mapping as never)}, ${jobId}
          from dataset_schema_versions where dataset_id = ${datasetId}
          returning version`);
      });
    },
  };
}
