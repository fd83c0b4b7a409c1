import type { FragmentSqlToken } from 'slonik';
import { Type } from 'typebox';
import type {
  CatalogWithDatasets,
  ImportListings,
  ImportOutcome,
  ListPage,
} from '../../../ports/ingest/import-listings.ts';
import { importOutcomeJson } from '../import-outcome.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { Count, FileRow, JobRow, jobSelect, toFile, toJob, visibleTo } from './ingest-rows.ts';
import { RunFields, ScheduleRow, scheduleColumns, toRun, toSchedule } from './schedule-store.ts';
import { type ColumnMap, orderSql, whereSql } from '../where-sql.ts';

// The import lists of ports/ingest/import-listings.ts: ingest files and scheduled imports filtered by
// Payload's where tree (columns from the fixed maps below, values as parameters), scoped by the
// domain's import visibility, and the wizard's catalogs with their datasets.

const col = (alias: string, name: string, type: ColumnMap[string]['type']) => ({
  sql: sql.fragment`${sql.identifier([alias, name])}`,
  type,
});

const FILE_COLUMNS: ColumnMap = {
  id: col('f', 'id', 'number'),
  originalName: col('f', 'original_name', 'string'),
  status: col('f', 'status', 'string'),
  source: col('f', 'source', 'string'),
  format: col('f', 'format', 'string'),
  catalog: col('f', 'catalog_id', 'number'),
  uploadedBy: col('f', 'uploaded_by', 'number'),
  sizeBytes: col('f', 'size_bytes', 'number'),
  createdAt: col('f', 'created_at', 'date'),
  updatedAt: col('f', 'updated_at', 'date'),
  completedAt: col('f', 'completed_at', 'date'),
};

const SCHEDULE_COLUMNS: ColumnMap = {
  id: col('s', 'id', 'number'),
  name: col('s', 'name', 'string'),
  url: col('s', 'url', 'string'),
  enabled: col('s', 'enabled', 'boolean'),
  catalog: col('s', 'catalog_id', 'number'),
  dataset: col('s', 'dataset_id', 'number'),
  createdBy: col('s', 'created_by', 'number'),
  lastStatus: col('s', 'last_status', 'string'),
  nextRunAt: col('s', 'next_run_at', 'date'),
  lastRunAt: col('s', 'last_run_at', 'date'),
  createdAt: col('s', 'created_at', 'date'),
  updatedAt: col('s', 'updated_at', 'date'),
};

const RunRecordRow = row(
  Type.Object({
    ...RunFields.properties,
    created_at: Type.String(),
    finished_at: Nullable(Type.String()),
    import: Type.Any(),
  }),
);

const CatalogRow = row(
  Type.Object({ id: Type.Number(), slug: Type.String(), title: Type.String(), is_public: Type.Boolean() }),
);
const DatasetRow = row(
  Type.Object({
    id: Type.Number(),
    catalog_id: Type.Number(),
    slug: Type.String(),
    title: Type.String(),
    is_public: Type.Boolean(),
  }),
);

/** ORDER BY the page's sort (then the id), LIMIT and OFFSET of the page. */
const pageSql = (page: ListPage, columns: ColumnMap, id: FragmentSqlToken) =>
  sql.fragment`order by ${orderSql(page.sort, columns, id)} limit ${page.limit} offset ${(page.page - 1) * page.limit}`;

export function postgresImportListings(pool: DatabasePool): ImportListings {
  const count = (from: FragmentSqlToken, where: FragmentSqlToken) =>
    pool.oneFirst(sql.type(Count)`select count(*)::int as count from ${from} where ${where}`);
  return {
    async ingestFiles(visibility, page) {
      const where = sql.fragment`${visibleTo(visibility, sql.fragment`f.uploaded_by`, sql.fragment`f.catalog_id`)}
        and ${whereSql(page.where, FILE_COLUMNS)}`;
      const totalDocs = await count(sql.fragment`ingest_files f`, where);
      const rows = await pool.any(sql.type(FileRow)`
        select f.* from ingest_files f where ${where} ${pageSql(page, FILE_COLUMNS, sql.fragment`f.id`)}`);
      const files = rows.map(toFile);
      const ids = files.map((file) => file.id);
      const jobs = ids.length
        ? await pool.any(sql.type(JobRow)`${jobSelect}
            where j.ingest_file_id = any(${sql.array(ids, 'int8')}) order by j.ingest_file_id, j.sheet_index`)
        : [];
      return { files, jobs: jobs.map(toJob), totalDocs };
    },

    async catalogsWithDatasets(scope, limits) {
      const owned =
        scope.kind === 'all'
          ? sql.fragment`true`
          : scope.catalogIds === null
            ? sql.fragment`c.created_by = ${scope.userId}`
            : sql.fragment`c.created_by = ${scope.userId} and c.id = any(${sql.array([...scope.catalogIds], 'int8')})`;
      const catalogs = await pool.any(sql.type(CatalogRow)`
        select c.id, c.slug, c.title, c.is_public from catalogs c where ${owned}
        order by lower(c.title), c.id limit ${limits.limit + 1}`);
      const kept = catalogs.slice(0, limits.limit);
      let truncated = catalogs.length > limits.limit;
      const ids = kept.map((c) => c.id);
      const datasets = ids.length
        ? await pool.any(sql.type(DatasetRow)`
            select id, catalog_id, slug, title, is_public from (
              select d.*, row_number() over (partition by d.catalog_id order by lower(d.title), d.id) as n
              from datasets d where d.catalog_id = any(${sql.array(ids, 'int8')})
            ) d where n <= ${limits.perCatalog + 1} order by catalog_id, n`)
        : [];
      const byCatalog = new Map<number, CatalogWithDatasets>(
        kept.map((c) => [
          c.id,
          { id: c.id, slug: c.slug, title: c.title, isPublic: c.is_public, datasets: [] },
        ]),
      );
      for (const d of datasets) {
        const catalog = byCatalog.get(d.catalog_id);
        if (!catalog) continue;
        if (catalog.datasets.length >= limits.perCatalog) {
          truncated = true;
          continue;
        }
        catalog.datasets.push({ id: d.id, slug: d.slug, title: d.title, isPublic: d.is_public });
      }
      return { catalogs: [...byCatalog.values()], truncated };
    },

    async schedules(visibility, page) {
      const where = sql.fragment`${visibleTo(visibility, sql.fragment`s.created_by`, sql.fragment`s.catalog_id`)}
        and ${whereSql(page.where, SCHEDULE_COLUMNS)}`;
      const totalDocs = await count(sql.fragment`scheduled_ingests s`, where);
      const rows = await pool.any(sql.type(ScheduleRow)`
        select ${scheduleColumns} from scheduled_ingests s where ${where}
        ${pageSql(page, SCHEDULE_COLUMNS, sql.fragment`s.id`)}`);
      return { schedules: rows.map(toSchedule), totalDocs };
    },

    async runsOf(scheduleId, limit) {
      const rows = await pool.any(sql.type(RunRecordRow)`
        select id, scheduled_ingest_id, due_at, triggered_by, status, ingest_file_id, error, created_at, finished_at,
               ${importOutcomeJson(sql.fragment`r.ingest_file_id`)} as import
        from scheduled_ingest_runs r where scheduled_ingest_id = ${scheduleId}
        order by created_at desc, id desc limit ${limit}`);
      return rows.map((r) => ({
        ...toRun(r),
        createdAt: r.created_at,
        finishedAt: r.finished_at,
        import: r.import as ImportOutcome | null,
      }));
    },

    async deleteSchedule(id) {
      const gone = await pool.maybeOne(
        sql.type(
          row(Type.Object({ id: Type.Number() })),
        )`delete from scheduled_ingests where id = ${id} returning id`,
      );
      return gone !== null;
    },
  };
}
