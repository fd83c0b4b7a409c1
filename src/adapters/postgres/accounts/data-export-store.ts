import { Type } from 'typebox';
import type {
  DataExport,
  DataExportStore,
  UserDataReader,
} from '../../../ports/accounts/data-export-store.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';

// Data exports (migration 0730_data_exports.sql) and the reader of one user's data that the export
// job writes into the ZIP: every record as JSON (secrets such as password and token hashes left
// out), events in pages by id.

const ExportRow = row(
  Type.Object({
    id: Type.Number(),
    user_id: Type.Number(),
    status: Type.String(),
    stored_path: Nullable(Type.String()),
    size_bytes: Nullable(Type.Number()),
    error: Nullable(Type.String()),
    expires_at: Nullable(Type.String()),
    created_at: Type.String(),
    finished_at: Nullable(Type.String()),
  }),
);
const columns = sql.fragment`id, user_id, status, stored_path, size_bytes, error, expires_at, created_at, finished_at`;
const Doc = row(Type.Object({ doc: Type.Record(Type.String(), Type.Unknown()) }));

function toExport(r: Record<string, unknown>): DataExport {
  return {
    id: r.id as number,
    userId: r.user_id as number,
    status: r.status as DataExport['status'],
    storedPath: r.stored_path as string | null,
    sizeBytes: r.size_bytes as number | null,
    error: r.error as string | null,
    expiresAt: r.expires_at as string | null,
    createdAt: r.created_at as string,
    finishedAt: r.finished_at as string | null,
  };
}

export function postgresDataExportStore(pool: DatabasePool): DataExportStore {
  return {
    async create(userId) {
      const created = await pool.maybeOne(sql.type(ExportRow)`
        insert into data_exports (user_id) values (${userId})
        on conflict (user_id) where status in ('queued', 'running') do nothing
        returning ${columns}`);
      return created ? toExport(created) : null;
    },
    async get(id) {
      const found = await pool.maybeOne(
        sql.type(ExportRow)`select ${columns} from data_exports where id = ${id}`,
      );
      return found ? toExport(found) : null;
    },
    async latestFor(userId) {
      const found = await pool.maybeOne(sql.type(ExportRow)`
        select ${columns} from data_exports where user_id = ${userId} order by id desc limit 1`);
      return found ? toExport(found) : null;
    },
    async hasActive(userId) {
      return pool.oneFirst(sql.type(row(Type.Object({ active: Type.Boolean() })))`
        select exists (select 1 from data_exports where user_id = ${userId} and status in ('queued', 'running')) as active`);
    },
    async requestsSince(userId, since) {
      // Milliseconds since the epoch: an instant, whatever the session's time zone and text format.
      const found = await pool.one(sql.type(
        row(Type.Object({ n: Type.Number(), oldestMs: Type.Union([Type.Number(), Type.Null()]) })),
      )`
        select count(*)::int as n, (extract(epoch from min(created_at)) * 1000)::float8 as "oldestMs"
        from data_exports where user_id = ${userId} and created_at > ${since.toISOString()}`);
      return { count: found.n, oldest: found.oldestMs === null ? null : new Date(found.oldestMs) };
    },
    async markRunning(id) {
      await pool.query(
        sql.unsafe`update data_exports set status = 'running' where id = ${id} and status = 'queued'`,
      );
    },
    async markReady(id, file) {
      await pool.query(sql.unsafe`
        update data_exports set status = 'ready', stored_path = ${file.storedPath}, size_bytes = ${file.sizeBytes},
          expires_at = ${file.expiresAt}, finished_at = now() where id = ${id}`);
    },
    async markFailed(id, error) {
      await pool.query(sql.unsafe`
        update data_exports set status = 'failed', error = ${error.slice(0, 1000)}, finished_at = now() where id = ${id}`);
    },
    async expired(now, limit) {
      const rows = await pool.any(sql.type(ExportRow)`
        select ${columns} from data_exports
        where status = 'ready' and stored_path is not null and expires_at <= ${now.toISOString()}
        order by expires_at limit ${limit}`);
      return rows.map(toExport);
    },
    async forgetFile(id) {
      await pool.query(sql.unsafe`update data_exports set stored_path = null where id = ${id}`);
    },
  };
}

/** The datasets that are the user's: in their catalogs, or created by them. */
const ownDatasets = (userId: number) => sql.fragment`
  select d.id from datasets d join catalogs c on c.id = d.catalog_id
  where c.created_by = ${userId} or d.created_by = ${userId}`;

export function postgresUserDataReader(pool: DatabasePool): UserDataReader {
  const docs = async (query: ReturnType<typeof sql.fragment>) =>
    (await pool.any(sql.type(Doc)`${query}`)).map((r) => r.doc);
  return {
    async account(userId) {
      return pool.maybeOneFirst(sql.type(Doc)`
        select to_jsonb(u) - 'password_hash' as doc from users u where u.id = ${userId}`);
    },
    catalogs: (userId) =>
      docs(
        sql.fragment`select to_jsonb(c) as doc from catalogs c where c.created_by = ${userId} order by c.id`,
      ),
    datasets: (userId) =>
      docs(
        sql.fragment`select to_jsonb(d) as doc from datasets d where d.id in (${ownDatasets(userId)}) order by d.id`,
      ),
    events: (userId, after, limit) =>
      docs(sql.fragment`
        select jsonb_build_object(
          'id', e.id, 'dataset', e.dataset_id, 'uniqueId', e.unique_id, 'title', e.title,
          'eventTimestamp', to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'longitude', ST_X(e.location), 'latitude', ST_Y(e.location), 'data', e.data) as doc
        from events e where e.dataset_id in (${ownDatasets(userId)}) and e.id > ${after}
        order by e.id limit ${limit}`),
    imports: (userId) =>
      docs(sql.fragment`
        select to_jsonb(f) || jsonb_build_object('jobs', coalesce((
          select jsonb_agg(to_jsonb(j) order by j.sheet_index) from ingest_jobs j where j.ingest_file_id = f.id), '[]'::jsonb)) as doc
        from ingest_files f where f.uploaded_by = ${userId} order by f.id`),
    scrapers: (userId) =>
      docs(sql.fragment`
        select (to_jsonb(r) - 'webhook_token_hash') || jsonb_build_object('scrapers', coalesce((
          select jsonb_agg(to_jsonb(s) - 'webhook_token_hash' order by s.id) from scrapers s where s.repo_id = r.id), '[]'::jsonb)) as doc
        from scraper_repos r where r.created_by = ${userId} order by r.id`),
    scraperRuns: (userId) =>
      docs(sql.fragment`
        select to_jsonb(x) - 'result_file' as doc from scraper_runs x
        where x.scraper_id in (select s.id from scrapers s join scraper_repos r on r.id = s.repo_id where r.created_by = ${userId})
        order by x.id`),
  };
}
