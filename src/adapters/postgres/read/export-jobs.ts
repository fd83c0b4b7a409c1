import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { Viewer } from '../../../domain/access.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import type { ExportJob, ExportJobState, ExportJobStore } from '../../../ports/read/export-jobs.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { isUuid } from '../../../domain/uuid.ts';

// Background exports of a view (migration 0921_view_export_jobs.sql; ports/read/export-jobs.ts).
// The lease is the database's clock (heartbeat_at against now()), so API processes whose clocks
// differ agree on which job stopped. A queued job's heartbeat_at is when it was last sent again.

const JobRow = row(
  Type.Object({
    id: Type.String(),
    export_key: Type.String(),
    format: Type.String(),
    query: Type.Record(Type.String(), Type.Unknown()),
    viewer: Type.Unknown(),
    state: Type.String(),
    reason: Nullable(Type.String()),
    written: Type.Number(),
    estimated: Type.Number(),
    attempts: Type.Number(),
    idle_seconds: Nullable(Type.Number()),
  }),
);
const columns = sql.fragment`id::text, export_key, format, query, viewer, state, reason, written::float8 as written,
  estimated::float8 as estimated, attempts,
  case when state in ('queued', 'running') then extract(epoch from now() - coalesce(heartbeat_at, created_at))::float8
  end as idle_seconds`;

function toJob(r: {
  id: string;
  export_key: string;
  format: string;
  query: Record<string, unknown>;
  viewer: unknown;
  state: string;
  reason: string | null;
  written: number;
  estimated: number;
  attempts: number;
  idle_seconds: number | null;
}): ExportJob {
  return {
    id: r.id,
    exportKey: r.export_key,
    format: r.format,
    query: r.query as RawQuery,
    viewer: (r.viewer ?? null) as Viewer,
    state: r.state as ExportJobState,
    reason: r.reason,
    written: r.written,
    estimated: r.estimated,
    attempts: r.attempts,
    idleSeconds: r.idle_seconds,
  };
}

export function postgresExportJobStore(pool: DatabasePool): ExportJobStore {
  const find = async (id: string) => {
    // Not a uuid: no such job (the route's 404), never a 500.
    if (!isUuid(id)) return null;
    const found = await pool.maybeOne(
      sql.type(JobRow)`select ${columns} from view_export_jobs where id = ${id}`,
    );
    return found ? toJob(found) : null;
  };
  return {
    async startOrJoin({ exportKey, format, query, viewer, estimated }) {
      const viewerId = viewer?.id ?? null;
      for (;;) {
        const created = await pool.maybeOne(sql.type(JobRow)`
          insert into view_export_jobs (id, export_key, format, query, viewer, viewer_id, estimated)
          values (${randomUUID()}, ${exportKey}, ${format}, ${sql.jsonb(query as never)},
            ${viewer === null ? null : sql.jsonb(viewer as never)}, ${viewerId}, ${estimated})
          on conflict (export_key, coalesce(viewer_id, 0)) where state in ('queued', 'running') do nothing
          returning ${columns}`);
        if (created) return { job: toJob(created), created: true };
        const running = await pool.maybeOne(sql.type(JobRow)`
          select ${columns} from view_export_jobs where export_key = ${exportKey}
            and coalesce(viewer_id, 0) = ${viewerId ?? 0} and state in ('queued', 'running')`);
        // Finished between the insert and the select: try again (a new job, or the kept file next time).
        if (running) return { job: toJob(running), created: false };
      }
    },
    find,
    async claim(id, leaseSeconds) {
      const claimed = await pool.maybeOne(sql.type(row(Type.Object({ id: Type.String() })))`
        update view_export_jobs set state = 'running', attempts = attempts + 1, heartbeat_at = now(), written = 0
        where id = ${id} and (state = 'queued'
          or (state = 'running' and heartbeat_at < now() - make_interval(secs => ${leaseSeconds})))
        returning id::text`);
      return claimed !== null;
    },
    async heartbeat(id, written) {
      await pool.query(sql.unsafe`
        update view_export_jobs set heartbeat_at = now(), written = ${written} where id = ${id} and state = 'running'`);
    },
    async finish(id, outcome) {
      await pool.query(sql.unsafe`
        update view_export_jobs set state = ${outcome.state}, finished_at = now(), heartbeat_at = null,
          reason = ${outcome.state === 'failed' ? outcome.reason.slice(0, 1000) : null},
          written = ${outcome.state === 'done' ? outcome.written : sql.fragment`written`}
        where id = ${id} and state in ('queued', 'running')`);
    },
    async requeueStalled(id, idleSeconds) {
      const moved = await pool.maybeOne(sql.type(row(Type.Object({ id: Type.String() })))`
        update view_export_jobs set state = 'queued', heartbeat_at = now()
        where id = ${id} and state in ('queued', 'running')
          and coalesce(heartbeat_at, created_at) < now() - make_interval(secs => ${idleSeconds})
        returning id::text`);
      return moved !== null;
    },
  };
}
