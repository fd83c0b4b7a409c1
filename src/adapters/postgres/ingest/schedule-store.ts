import { Type } from 'typebox';
import type { ScheduleStore, ScheduledIngest, ScheduledRun } from '../../../ports/ingest/schedule-store.ts';
import { hasCompletedImport } from '../completed-imports.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { recordRunHealth } from '../source-health.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const ScheduleRow = row(
  Type.Object({
    id: Type.Number(),
    name: Type.String(),
    url: Type.String(),
    schedule: Nullable(Type.String()),
    enabled: Type.Boolean(),
    catalog_id: Type.Number(),
    dataset_id: Nullable(Type.Number()),
    settings: Type.Any(),
    review_duplicates: Type.String(),
    created_by: Nullable(Type.Number()),
    next_run_at: Nullable(Type.String()),
    last_run_at: Nullable(Type.String()),
    last_status: Nullable(Type.String()),
    last_error: Nullable(Type.String()),
    created_at: Type.String(),
    updated_at: Type.String(),
    alert_after: Type.Number(),
    health_streak: Type.Number(),
    health_last: Nullable(Type.String()),
  }),
);

/** The columns of a scheduled_ingest_runs row that toRun reads. */
export const RunFields = Type.Object({
  id: Type.Number(),
  scheduled_ingest_id: Type.Number(),
  due_at: Type.String(),
  triggered_by: Type.String(),
  status: Type.String(),
  ingest_file_id: Nullable(Type.Number()),
  error: Nullable(Type.String()),
});
const RunRow = row(RunFields);

const columns = sql.fragment`id, name, url, schedule, enabled, catalog_id, dataset_id, settings, review_duplicates,
  created_by, next_run_at,
  last_run_at, last_status, last_error, created_at, updated_at, alert_after, health_streak, health_last`;
/** The columns toSchedule reads, for other queries of scheduled_ingests (import-listings.ts). */
export const scheduleColumns = columns;

export function toSchedule(r: Record<string, unknown>): ScheduledIngest {
  return {
    id: r.id as number,
    name: r.name as string,
    url: r.url as string,
    schedule: r.schedule as string | null,
    enabled: r.enabled as boolean,
    catalogId: r.catalog_id as number,
    datasetId: r.dataset_id as number | null,
    settings: r.settings as ScheduledIngest['settings'],
    reviewDuplicates: r.review_duplicates as ScheduledIngest['reviewDuplicates'],
    createdBy: r.created_by as number | null,
    nextRunAt: r.next_run_at as string | null,
    lastRunAt: r.last_run_at as string | null,
    lastStatus: r.last_status as string | null,
    lastError: r.last_error as string | null,
    createdAt: r.created_at as string,
    updatedAt: r.updated_at as string,
    health: {
      streak: r.health_streak as number,
      last: r.health_last as 'failed' | 'empty' | null,
      alertAfter: r.alert_after as number,
    },
  };
}

export function toRun(r: Record<string, unknown>): ScheduledRun {
  return {
    id: r.id as number,
    scheduledIngestId: r.scheduled_ingest_id as number,
    dueAt: r.due_at as string,
    triggeredBy: r.triggered_by as ScheduledRun['triggeredBy'],
    status: r.status as ScheduledRun['status'],
    ingestFileId: r.ingest_file_id as number | null,
    error: r.error as string | null,
  };
}

export function postgresScheduleStore(pool: DatabasePool): ScheduleStore {
  return {
    async create(input) {
      const created = await pool.one(sql.type(ScheduleRow)`
        insert into scheduled_ingests (name, url, schedule, enabled, catalog_id, dataset_id, settings, review_duplicates,
                                       created_by, webhook_token_hash, next_run_at)
        values (${input.name}, ${input.url}, ${input.schedule}, ${input.enabled}, ${input.catalogId}, ${input.datasetId},
                ${sql.jsonb(input.settings as never)}, ${input.reviewDuplicates}, ${input.createdBy},
                ${input.webhookTokenHash}, ${input.nextRunAt})
        returning ${columns}`);
      return toSchedule(created);
    },

    async get(id) {
      const found = await pool.maybeOne(
        sql.type(ScheduleRow)`select ${columns} from scheduled_ingests where id = ${id}`,
      );
      return found ? toSchedule(found) : null;
    },

    async update(id, change) {
      const sets = [
        change.name !== undefined ? sql.fragment`name = ${change.name}` : null,
        change.url !== undefined ? sql.fragment`url = ${change.url}` : null,
        change.catalogId !== undefined ? sql.fragment`catalog_id = ${change.catalogId}` : null,
        change.settings !== undefined
          ? sql.fragment`settings = ${sql.jsonb(change.settings as never)}`
          : null,
        change.reviewDuplicates !== undefined
          ? sql.fragment`review_duplicates = ${change.reviewDuplicates}`
          : null,
        change.schedule !== undefined ? sql.fragment`schedule = ${change.schedule}` : null,
        change.enabled !== undefined ? sql.fragment`enabled = ${change.enabled}` : null,
        change.nextRunAt !== undefined ? sql.fragment`next_run_at = ${change.nextRunAt}` : null,
        change.datasetId !== undefined ? sql.fragment`dataset_id = ${change.datasetId}` : null,
        change.webhookTokenHash !== undefined
          ? sql.fragment`webhook_token_hash = ${change.webhookTokenHash}`
          : null,
        change.alertAfter !== undefined ? sql.fragment`alert_after = ${change.alertAfter}` : null,
        sql.fragment`updated_at = now()`,
      ].filter((set) => set !== null);
      const updated = await pool.maybeOne(sql.type(ScheduleRow)`
        update scheduled_ingests set ${sql.join(sets, sql.fragment`, `)} where id = ${id} returning ${columns}`);
      return updated ? toSchedule(updated) : null;
    },

    async due(now) {
      const rows = await pool.any(sql.type(ScheduleRow)`
        select ${columns} from scheduled_ingests
        where enabled and schedule is not null and next_run_at <= ${now.toISOString()}
        order by next_run_at, id`);
      return rows.map(toSchedule);
    },

    async countActive(userId) {
      return pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
        select count(*)::int as n from scheduled_ingests
        where enabled and schedule is not null and created_by is not distinct from ${userId}`);
    },

    async byTokenHash(hash) {
      const found = await pool.maybeOne(sql.type(ScheduleRow)`
        select ${columns} from scheduled_ingests where webhook_token_hash = ${hash}`);
      return found ? toSchedule(found) : null;
    },

    async claimRun(scheduleId, dueAt, by) {
      return pool.transaction(async (tx) => {
        const run = await tx.maybeOne(sql.type(RunRow)`
          insert into scheduled_ingest_runs (scheduled_ingest_id, due_at, triggered_by)
          values (${scheduleId}, ${dueAt.toISOString()}, ${by})
          on conflict (scheduled_ingest_id, due_at) do nothing
          returning id, scheduled_ingest_id, due_at, triggered_by, status, ingest_file_id, error`);
        if (run) {
          await tx.query(sql.unsafe`
            update scheduled_ingests set last_run_at = now(), last_status = 'queued', updated_at = now()
            where id = ${scheduleId}`);
        }
        return run ? toRun(run) : null;
      });
    },

    async getRun(id) {
      const found = await pool.maybeOne(sql.type(RunRow)`
        select id, scheduled_ingest_id, due_at, triggered_by, status, ingest_file_id, error
        from scheduled_ingest_runs where id = ${id}`);
      return found ? toRun(found) : null;
    },

    hasCompletedImport: (scheduleId, datasetId) =>
      hasCompletedImport(pool, 'schedule', scheduleId, datasetId),

    async finishRun(runId, outcome) {
      await pool.transaction(async (tx) => {
        const scheduleId = await tx.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
          update scheduled_ingest_runs
          set status = ${outcome.status}, ingest_file_id = coalesce(${outcome.ingestFileId ?? null}::bigint, ingest_file_id),
              error = ${outcome.error ?? null},
              finished_at = case when ${outcome.status} = 'fetching' then null else now() end
          where id = ${runId}
          returning scheduled_ingest_id as id`);
        await tx.query(sql.unsafe`
          update scheduled_ingests set last_status = ${outcome.status}, last_error = ${outcome.error ?? null}, updated_at = now()
          where id = ${scheduleId}`);
        // A fetch that failed for good is a bad run of the source (a fetched file is judged when its import ends).
        if (outcome.status === 'failed')
          await recordRunHealth(tx, { kind: 'schedule', id: scheduleId }, 'failed');
      });
    },
  };
}
