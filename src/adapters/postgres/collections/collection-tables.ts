import type { FragmentSqlToken } from 'slonik';
import type { Viewer } from '../../../domain/access.ts';
import type { CollectionSlug } from '../../../domain/collections/collections.ts';
import { sql } from '../database.ts';
import { importOutcomeJson } from '../import-outcome.ts';
import { visibleCatalogCondition, visibleDatasetCondition } from '../visibility.ts';
import type { ColumnMap } from '../where-sql.ts';

// How each collection of domain/collections/collections.ts sits in the database: its FROM clause, the column
// behind each filterable field, the JSON document it answers, who may read which rows, and the
// columns a write may set. Everything here is fixed text; callers supply values only.

export type WritableColumn =
  | { column: string; kind: 'text' | 'int' | 'bool' | 'timestamptz' | 'jsonb' | 'point' }
  /** One key of a jsonb settings column: written without touching the column's other keys. */
  | { column: string; kind: 'setting'; key: string };

export type CollectionTable = {
  table: string;
  from: FragmentSqlToken;
  id: FragmentSqlToken;
  columns: ColumnMap;
  doc: FragmentSqlToken;
  /** The document in lists when it leaves out large fields (code, logs, result files) of `doc`. */
  listDoc?: FragmentSqlToken;
  readable(viewer: Viewer): FragmentSqlToken;
  writable: Record<string, WritableColumn>;
};

const iso = (column: FragmentSqlToken) =>
  sql.fragment`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const t = (name: string) => sql.fragment`${sql.identifier(['t', name])}`;

const number = (name: string) => ({ sql: t(name), type: 'number' as const });
const text = (name: string) => ({ sql: t(name), type: 'string' as const });
const bool = (name: string) => ({ sql: t(name), type: 'boolean' as const });
const date = (name: string) => ({ sql: t(name), type: 'date' as const });

/**
 * An event's location in the collections API: the generalised one (public_location) when its
 * dataset has location privacy, for every caller (issue 38 §4); owners read exact points through
 * /api/v1, which knows who may write.
 */
const EVENT_LOCATION = sql.fragment`(case when d.privacy_cell_metres is null then t.location else t.public_location end)`;

const timestamps = { createdAt: date('created_at'), updatedAt: date('updated_at') };

// Catalogs and datasets describe themselves with the same columns.
const describedColumns = {
  slug: text('slug'),
  title: text('title'),
  description: text('description'),
  isPublic: bool('is_public'),
  createdBy: number('created_by'),
  ...timestamps,
};
const describedDoc = sql.fragment`'slug', t.slug, 'title', t.title, 'description', t.description,
  'isPublic', t.is_public, 'createdBy', t.created_by,
  'createdAt', ${iso(t('created_at'))}, 'updatedAt', ${iso(t('updated_at'))}`;
const describedWritable: Record<string, WritableColumn> = {
  slug: { column: 'slug', kind: 'text' },
  title: { column: 'title', kind: 'text' },
  description: { column: 'description', kind: 'text' },
  isPublic: { column: 'is_public', kind: 'bool' },
  createdBy: { column: 'created_by', kind: 'int' },
};

/** Scraper repos, and everything below one, belong to the repo's owner; admins see all. */
const ownedRepo =
  (alias: string) =>
  (viewer: Viewer): FragmentSqlToken =>
    viewer === null
      ? sql.fragment`false`
      : viewer.role === 'admin'
        ? sql.fragment`true`
        : sql.fragment`${sql.identifier([alias, 'created_by'])} = ${viewer.id}`;

const repoFields = sql.fragment`'id', t.id, 'name', t.name, 'slug', t.slug, 'sourceType', t.source_type,
  'gitUrl', t.git_url, 'gitBranch', t.git_branch, 'catalog', t.catalog_id, 'createdBy', t.created_by,
  'syncStatus', t.sync_status, 'lastSyncAt', ${iso(t('last_sync_at'))}, 'lastSyncError', t.last_sync_error,
  'createdAt', ${iso(t('created_at'))}, 'updatedAt', ${iso(t('updated_at'))}`;

const runFields = sql.fragment`'id', t.id, 'runId', t.run_id, 'scraper', t.scraper_id, 'repo', s.repo_id,
  'status', t.status, 'triggeredBy', t.triggered_by, 'triggeredByUser', t.triggered_by_user,
  'scheduledFor', ${iso(t('scheduled_for'))}, 'queuedAt', ${iso(t('queued_at'))},
  'startedAt', ${iso(t('started_at'))}, 'finishedAt', ${iso(t('finished_at'))}, 'durationMs', t.duration_ms,
  'exitCode', t.exit_code, 'error', t.error, 'errorCode', t.error_code, 'outputRows', t.output_rows,
  'outputBytes', t.output_bytes, 'ingestFile', t.ingest_file_id, 'importError', t.import_error,
  'commit', t.commit_sha,
  'import', ${importOutcomeJson(sql.fragment`t.ingest_file_id`)}`;

export const COLLECTION_TABLES: Record<CollectionSlug, CollectionTable> = {
  users: {
    table: 'users',
    from: sql.fragment`users t`,
    id: t('id'),
    columns: {
      id: number('id'),
      email: text('email'),
      role: text('role'),
      trustLevel: number('trust_level'),
      ...timestamps,
    },
    doc: sql.fragment`json_build_object('id', t.id, 'email', t.email, 'role', t.role, 'trustLevel', t.trust_level,
      'createdAt', ${iso(t('created_at'))}, 'updatedAt', ${iso(t('updated_at'))})`,
    // Users see their own row only; admins see everyone; anonymous callers nobody.
    readable: (viewer) =>
      viewer === null
        ? sql.fragment`false`
        : viewer.role === 'admin'
          ? sql.fragment`true`
          : sql.fragment`t.id = ${viewer.id}`,
    writable: {
      email: { column: 'email', kind: 'text' },
      passwordHash: { column: 'password_hash', kind: 'text' },
      role: { column: 'role', kind: 'text' },
      trustLevel: { column: 'trust_level', kind: 'int' },
    },
  },
  catalogs: {
    table: 'catalogs',
    from: sql.fragment`catalogs t`,
    id: t('id'),
    columns: { id: number('id'), ...describedColumns },
    doc: sql.fragment`json_build_object('id', t.id, ${describedDoc})`,
    readable: (viewer) => visibleCatalogCondition(viewer, 't'),
    writable: describedWritable,
  },
  datasets: {
    table: 'datasets',
    from: sql.fragment`datasets t join catalogs c on c.id = t.catalog_id`,
    id: t('id'),
    columns: {
      id: number('id'),
      catalog: number('catalog_id'),
      ...describedColumns,
      provenancePublic: bool('provenance_public'),
    },
    doc: sql.fragment`json_build_object('id', t.id, 'catalog', t.catalog_id, ${describedDoc},
      'dateFields', case when jsonb_typeof(t.schema_settings->'dateFields') = 'array'
                         then t.schema_settings->'dateFields' else '[]'::jsonb end,
      'provenancePublic', t.provenance_public,
      'privacyCellMetres', t.privacy_cell_metres, 'privacyMinCount', t.privacy_min_count)`,
    readable: (viewer) => visibleDatasetCondition(viewer, { dataset: 't', catalog: 'c' }),
    writable: {
      catalog: { column: 'catalog_id', kind: 'int' },
      ...describedWritable,
      dateFields: { column: 'schema_settings', kind: 'setting', key: 'dateFields' },
      provenancePublic: { column: 'provenance_public', kind: 'bool' },
      // Location privacy (issue 38 §4, migration 0880): the owner's generalisation size in metres
      // (null: none) and minimum count per cell; the database checks their ranges (400 otherwise).
      privacyCellMetres: { column: 'privacy_cell_metres', kind: 'int' },
      privacyMinCount: { column: 'privacy_min_count', kind: 'int' },
    },
  },
  events: {
    table: 'events',
    from: sql.fragment`events t join datasets d on d.id = t.dataset_id join catalogs c on c.id = d.catalog_id`,
    id: t('id'),
    columns: {
      id: number('id'),
      dataset: number('dataset_id'),
      catalog: number('catalog_id'),
      uniqueId: text('unique_id'),
      title: text('title'),
      eventTimestamp: date('event_timestamp'),
      isValid: bool('is_valid'),
      ...timestamps,
    },
    doc: sql.fragment`json_build_object('id', t.id, 'dataset', t.dataset_id, 'catalog', t.catalog_id,
      'uniqueId', t.unique_id, 'title', t.title,
      'data', case when d.privacy_cell_metres is null then t.data else t.data - d.location_fields end,
      'location', case when ${EVENT_LOCATION} is null then null
        else json_build_object('longitude', st_x(${EVENT_LOCATION}), 'latitude', st_y(${EVENT_LOCATION})) end,
      'eventTimestamp', ${iso(t('event_timestamp'))}, 'isValid', t.is_valid,
      'createdAt', ${iso(t('created_at'))}, 'updatedAt', ${iso(t('updated_at'))})`,
    readable: (viewer) => visibleDatasetCondition(viewer, { dataset: 'd', catalog: 'c' }),
    writable: {
      dataset: { column: 'dataset_id', kind: 'int' },
      catalog: { column: 'catalog_id', kind: 'int' },
      uniqueId: { column: 'unique_id', kind: 'text' },
      title: { column: 'title', kind: 'text' },
      data: { column: 'data', kind: 'jsonb' },
      location: { column: 'location', kind: 'point' },
      eventTimestamp: { column: 'event_timestamp', kind: 'timestamptz' },
      isValid: { column: 'is_valid', kind: 'bool' },
    },
  },
  'scraper-repos': {
    table: 'scraper_repos',
    from: sql.fragment`scraper_repos t`,
    id: t('id'),
    columns: {
      id: number('id'),
      name: text('name'),
      slug: text('slug'),
      sourceType: text('source_type'),
      gitUrl: text('git_url'),
      gitBranch: text('git_branch'),
      catalog: number('catalog_id'),
      createdBy: number('created_by'),
      syncStatus: text('sync_status'),
      lastSyncAt: date('last_sync_at'),
      ...timestamps,
    },
    doc: sql.fragment`json_build_object(${repoFields}, 'code', t.code)`,
    listDoc: sql.fragment`json_build_object(${repoFields},
      'fileCount', case when t.code is null then null else (select count(*) from jsonb_object_keys(t.code))::int end)`,
    readable: ownedRepo('t'),
    // Name, slug and catalog only: the source goes through the scraper use cases (it queues a sync).
    writable: {
      name: { column: 'name', kind: 'text' },
      slug: { column: 'slug', kind: 'text' },
      catalog: { column: 'catalog_id', kind: 'int' },
    },
  },
  scrapers: {
    table: 'scrapers',
    from: sql.fragment`scrapers t join scraper_repos r on r.id = t.repo_id`,
    id: t('id'),
    columns: {
      id: number('id'),
      repo: number('repo_id'),
      name: text('name'),
      slug: text('slug'),
      runtime: text('runtime'),
      schedule: text('schedule'),
      enabled: bool('enabled'),
      targetDataset: number('target_dataset_id'),
      autoImport: bool('auto_import'),
      reviewDuplicates: text('review_duplicates'),
      webhookEnabled: bool('webhook_enabled'),
      lastRunStatus: text('last_run_status'),
      lastRunAt: date('last_run_at'),
      ...timestamps,
    },
    doc: sql.fragment`json_build_object('id', t.id, 'repo', t.repo_id, 'name', t.name, 'slug', t.slug,
      'runtime', t.runtime, 'entrypoint', t.entrypoint, 'outputFile', t.output_file, 'schedule', t.schedule,
      'enabled', t.enabled, 'envVars', t.env_vars, 'timeoutSecs', t.timeout_secs, 'memoryMb', t.memory_mb,
      'targetDataset', t.target_dataset_id, 'autoImport', t.auto_import,
      'reviewDuplicates', t.review_duplicates, 'webhookEnabled', t.webhook_enabled,
      'statistics', json_build_object('totalRuns', t.total_runs, 'successRuns', t.success_runs,
        'failedRuns', t.failed_runs, 'lastRunAt', ${iso(t('last_run_at'))}, 'lastRunStatus', t.last_run_status,
        'lastRunDurationMs', t.last_run_duration_ms),
      'health', json_build_object('streak', t.health_streak, 'last', t.health_last, 'alertAfter', t.alert_after),
      'createdAt', ${iso(t('created_at'))}, 'updatedAt', ${iso(t('updated_at'))})`,
    readable: ownedRepo('r'),
    // Written through the scraper use cases (ScraperStore.update, setScraperWebhook), never field by field.
    writable: {},
  },
  'scraper-runs': {
    table: 'scraper_runs',
    from: sql.fragment`scraper_runs t join scrapers s on s.id = t.scraper_id join scraper_repos r on r.id = s.repo_id`,
    id: t('id'),
    columns: {
      id: number('id'),
      runId: { sql: sql.fragment`t.run_id::text`, type: 'string' },
      scraper: number('scraper_id'),
      status: text('status'),
      triggeredBy: text('triggered_by'),
      errorCode: text('error_code'),
      exitCode: number('exit_code'),
      queuedAt: date('queued_at'),
      startedAt: date('started_at'),
      finishedAt: date('finished_at'),
    },
    doc: sql.fragment`json_build_object(${runFields},
      'stdout', t.stdout, 'stderr', t.stderr, 'resultFile', t.result_file)`,
    listDoc: sql.fragment`json_build_object(${runFields})`,
    readable: ownedRepo('r'),
    writable: {},
  },
};
