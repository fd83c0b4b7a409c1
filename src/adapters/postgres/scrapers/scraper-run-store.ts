import { type Static, Type } from 'typebox';
import type { ScraperRun } from '../../../domain/scrapers/scrapers.ts';
import type { ScraperRunStore } from '../../../ports/scrapers/scraper-run-store.ts';
import { hasCompletedImport } from '../completed-imports.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { recordRunHealth } from '../source-health.ts';
import { scraperRunHealth } from '../../../domain/source-health.ts';
import { RunStatusColumn } from './scraper-rows.ts';

const RunRow = Type.Object({
  id: Type.Number(),
  run_id: Type.String(),
  scraper_id: Type.Number(),
  status: RunStatusColumn,
  triggered_by: Type.Union([Type.Literal('schedule'), Type.Literal('manual'), Type.Literal('webhook')]),
  triggered_by_user: Nullable(Type.Number()),
  scheduled_for: Nullable(Type.String()),
  queued_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
  duration_ms: Nullable(Type.Number()),
  exit_code: Nullable(Type.Number()),
  stdout: Nullable(Type.String()),
  stderr: Nullable(Type.String()),
  error: Nullable(Type.String()),
  error_code: Nullable(Type.String()),
  output_rows: Nullable(Type.Number()),
  output_bytes: Nullable(Type.Number()),
  result_file: Nullable(Type.String()),
  ingest_file_id: Nullable(Type.Number()),
});
const Run = row(RunRow);
const RunningRun = row(Type.Object({ ...RunRow.properties, timeout_secs: Type.Number() }));

const COLUMNS = sql.fragment`r.id, r.run_id, r.scraper_id, r.status, r.triggered_by, r.triggered_by_user,
  r.scheduled_for, r.queued_at, r.started_at, r.finished_at, r.duration_ms, r.exit_code, r.stdout, r.stderr,
  r.error, r.error_code, r.output_rows, r.output_bytes, r.result_file, r.ingest_file_id`;

function toRun(r: Static<typeof RunRow>): ScraperRun {
  return {
    id: r.id,
    runId: r.run_id,
    scraperId: r.scraper_id,
    status: r.status,
    triggeredBy: r.triggered_by,
    triggeredByUser: r.triggered_by_user,
    scheduledFor: r.scheduled_for,
    queuedAt: r.queued_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
    exitCode: r.exit_code,
    stdout: r.stdout,
    stderr: r.stderr,
    error: r.error,
    errorCode: r.error_code,
    outputRows: r.output_rows,
    outputBytes: r.output_bytes,
    resultFile: r.result_file,
    ingestFileId: r.ingest_file_id,
  };
}

export function postgresScraperRunStore(pool: DatabasePool): ScraperRunStore {
  return {
    async createQueued(run) {
      const created = await pool.maybeOne(sql.type(Run)`
        insert into scraper_runs as r (run_id, scraper_id, triggered_by, triggered_by_user, scheduled_for)
        values (${run.runId}, ${run.scraperId}, ${run.triggeredBy}, ${run.triggeredByUser},
                ${run.scheduledFor ? run.scheduledFor.toISOString() : null})
        on conflict (scraper_id, scheduled_for) do nothing
        returning ${COLUMNS}`);
      return created ? toRun(created) : null;
    },

    async get(id) {
      const found = await pool.maybeOne(
        sql.type(Run)`select ${COLUMNS} from scraper_runs r where r.id = ${id}`,
      );
      return found ? toRun(found) : null;
    },

    async start(id) {
      return pool.transaction(async (tx) => {
        const scraperId = await tx.maybeOneFirst(sql.type(row(Type.Object({ scraper_id: Type.Number() })))`
          update scraper_runs set status = 'running', started_at = now()
          where id = ${id} and status = 'queued'
          returning scraper_id`);
        if (scraperId === null) return false;
        await tx.query(sql.unsafe`
          update scrapers set last_run_status = 'running', last_run_at = now() where id = ${scraperId}`);
        return true;
      });
    },

    async finish(id, from, outcome) {
      return pool.transaction(async (tx) => {
        const finished = await tx.maybeOne(sql.type(row(Type.Object({ scraper_id: Type.Number() })))`
          update scraper_runs set
            status = ${outcome.status},
            finished_at = now(),
            duration_ms = ${outcome.durationMs},
            exit_code = ${outcome.exitCode},
            stdout = ${outcome.stdout},
            stderr = ${outcome.stderr},
            error = ${outcome.error},
            error_code = ${outcome.errorCode},
            output_rows = ${outcome.outputRows},
            output_bytes = ${outcome.outputBytes},
            result_file = ${outcome.resultFile},
            commit_sha = ${outcome.commit ?? null}
          where id = ${id} and status = ${from}
          returning scraper_id`);
        if (!finished) return false;
        await tx.query(sql.unsafe`
          update scrapers set
            total_runs = total_runs + 1,
            success_runs = success_runs + ${outcome.status === 'success' ? 1 : 0},
            failed_runs = failed_runs + ${outcome.status === 'success' ? 0 : 1},
            last_run_at = now(),
            last_run_status = ${outcome.status},
            last_run_duration_ms = ${outcome.durationMs}
          where id = ${finished.scraper_id}`);
        await recordRunHealth(
          tx,
          { kind: 'scraper', id: finished.scraper_id },
          scraperRunHealth(outcome.status, outcome.outputRows),
        );
        return true;
      });
    },

    async recordImport(id, result) {
      if ('ingestFileId' in result) {
        await pool.query(sql.unsafe`
          update scraper_runs set ingest_file_id = ${result.ingestFileId}, result_file = null, import_error = null
          where id = ${id}`);
      } else {
        await pool.query(sql.unsafe`
          update scraper_runs set import_error = ${result.error}, error = ${result.error},
                 error_code = 'IMPORT_FAILED', result_file = ${result.resultFile}
          where id = ${id}`);
      }
    },

    hasCompletedImport: (scraperId, datasetId) => hasCompletedImport(pool, 'scraper', scraperId, datasetId),

    async listRunning() {
      const rows = await pool.any(sql.type(RunningRun)`
        select ${COLUMNS}, s.timeout_secs
        from scraper_runs r join scrapers s on s.id = r.scraper_id
        where r.status = 'running'
        order by r.started_at`);
      return rows.map((r) => ({ ...toRun(r), timeoutSecs: r.timeout_secs }));
    },
  };
}
