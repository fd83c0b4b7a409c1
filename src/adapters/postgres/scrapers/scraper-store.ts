import { type Static, Type } from 'typebox';
import type { RunStatus } from '../../../domain/scrapers/runs.ts';
import type { Scraper } from '../../../domain/scrapers/scrapers.ts';
import type { ScraperStore } from '../../../ports/scrapers/scraper-store.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { RunStatusColumn } from './scraper-rows.ts';

const ScraperRow = Type.Object({
  id: Type.Number(),
  repo_id: Type.Number(),
  name: Type.String(),
  slug: Type.String(),
  runtime: Type.Union([Type.Literal('python'), Type.Literal('node')]),
  entrypoint: Type.String(),
  output_file: Type.String(),
  schedule: Nullable(Type.String()),
  schedule_since: Type.String(),
  enabled: Type.Boolean(),
  env_vars: Type.Record(Type.String(), Type.String()),
  timeout_secs: Type.Number(),
  memory_mb: Type.Number(),
  target_dataset_id: Nullable(Type.Number()),
  auto_import: Type.Boolean(),
  review_duplicates: Type.Union([Type.Literal('first-run'), Type.Literal('always'), Type.Literal('never')]),
  total_runs: Type.Number(),
  success_runs: Type.Number(),
  failed_runs: Type.Number(),
  last_run_at: Nullable(Type.String()),
  last_run_status: Nullable(RunStatusColumn),
  last_run_duration_ms: Nullable(Type.Number()),
  webhook_enabled: Type.Boolean(),
  alert_after: Type.Number(),
  health_streak: Type.Number(),
  health_last: Nullable(Type.Union([Type.Literal('failed'), Type.Literal('empty')])),
});
const ScraperRecord = row(ScraperRow);
const SchedulableRecord = row(
  Type.Object({ ...ScraperRow.properties, last_scheduled_for: Nullable(Type.String()) }),
);

const COLUMNS = sql.fragment`s.id, s.repo_id, s.name, s.slug, s.runtime, s.entrypoint, s.output_file, s.schedule,
  s.schedule_since, s.enabled, s.env_vars, s.timeout_secs, s.memory_mb, s.target_dataset_id, s.auto_import,
  s.review_duplicates,
  s.total_runs, s.success_runs, s.failed_runs, s.last_run_at, s.last_run_status, s.last_run_duration_ms,
  s.webhook_enabled, s.alert_after, s.health_streak, s.health_last`;

function toScraper(r: Static<typeof ScraperRow>): Scraper {
  return {
    id: r.id,
    repoId: r.repo_id,
    name: r.name,
    slug: r.slug,
    runtime: r.runtime,
    entrypoint: r.entrypoint,
    outputFile: r.output_file,
    schedule: r.schedule,
    scheduleSince: r.schedule_since,
    enabled: r.enabled,
    envVars: r.env_vars,
    timeoutSecs: r.timeout_secs,
    memoryMb: r.memory_mb,
    targetDatasetId: r.target_dataset_id,
    autoImport: r.auto_import,
    reviewDuplicates: r.review_duplicates,
    webhookEnabled: r.webhook_enabled,
    statistics: {
      totalRuns: r.total_runs,
      successRuns: r.success_runs,
      failedRuns: r.failed_runs,
      lastRunAt: r.last_run_at,
      lastRunStatus: r.last_run_status as RunStatus | null,
      lastRunDurationMs: r.last_run_duration_ms,
    },
    health: { streak: r.health_streak, last: r.health_last, alertAfter: r.alert_after },
  };
}

export function postgresScraperStore(pool: DatabasePool): ScraperStore {
  return {
    async get(id) {
      const found = await pool.maybeOne(
        sql.type(ScraperRecord)`select ${COLUMNS} from scrapers s where s.id = ${id}`,
      );
      return found ? toScraper(found) : null;
    },

    async listByRepo(repoId) {
      const rows = await pool.any(
        sql.type(
          ScraperRecord,
        )`select ${COLUMNS} from scrapers s where s.repo_id = ${repoId} order by s.slug`,
      );
      return rows.map(toScraper);
    },

    async reconcile(repoId, declared) {
      return pool.transaction(async (tx) => {
        // One sync of a repo at a time, whatever the number of workers.
        await tx.query(sql.unsafe`select id from scraper_repos where id = ${repoId} for update`);
        const created: string[] = [];
        const updated: string[] = [];
        for (const scraper of declared) {
          const wasCreated = await tx.oneFirst(sql.type(row(Type.Object({ created: Type.Boolean() })))`
            insert into scrapers as s (repo_id, name, slug, runtime, entrypoint, output_file, schedule,
                                       timeout_secs, memory_mb)
            values (${repoId}, ${scraper.name}, ${scraper.slug}, ${scraper.runtime}, ${scraper.entrypoint},
                    ${scraper.outputFile}, ${scraper.schedule}, ${scraper.timeoutSecs}, ${scraper.memoryMb})
            on conflict (repo_id, slug) do update set
              name = excluded.name,
              runtime = excluded.runtime,
              entrypoint = excluded.entrypoint,
              output_file = excluded.output_file,
              schedule = excluded.schedule,
              -- A new schedule starts now: due times of the old one are not run.
              schedule_since = case when s.schedule is distinct from excluded.schedule then now()
                                    else s.schedule_since end,
              timeout_secs = excluded.timeout_secs,
              memory_mb = excluded.memory_mb,
              updated_at = now()
            returning (xmax = 0) as created`);
          (wasCreated ? created : updated).push(scraper.slug);
        }
        const slugs = declared.map((scraper) => scraper.slug);
        const gone = await tx.any(sql.type(
          row(Type.Object({ id: Type.Number(), slug: Type.String(), running: Type.Boolean() })),
        )`
          select s.id, s.slug,
                 (s.last_run_status = 'running'
                  or exists (select 1 from scraper_runs r where r.scraper_id = s.id and r.status = 'running')) as running
          from scrapers s
          where s.repo_id = ${repoId} and not (s.slug = any(${sql.array(slugs, 'text')}))
          for update of s`);
        const deleted = gone.filter((scraper) => !scraper.running);
        const kept = gone.filter((scraper) => scraper.running);
        if (deleted.length > 0) {
          await tx.query(
            sql.unsafe`delete from scrapers where id = any(${sql.array(
              deleted.map((s) => s.id),
              'int8',
            )})`,
          );
        }
        if (kept.length > 0) {
          // No longer declared: never scheduled again; deleted by the sync that follows the run.
          await tx.query(sql.unsafe`
            update scrapers set schedule = null, updated_at = now()
            where id = any(${sql.array(
              kept.map((s) => s.id),
              'int8',
            )})`);
        }
        return {
          created,
          updated,
          deleted: deleted.map((s) => s.slug),
          keptWhileRunning: kept.map((s) => s.slug),
        };
      });
    },

    async listSchedulable() {
      const rows = await pool.any(sql.type(SchedulableRecord)`
        select ${COLUMNS},
               (select max(r.scheduled_for) from scraper_runs r where r.scraper_id = s.id) as last_scheduled_for
        from scrapers s
        where s.enabled and s.schedule is not null
          and s.last_run_status is distinct from 'running'
          and not exists (select 1 from scraper_runs r
                          where r.scraper_id = s.id and r.status in ('queued', 'running'))
        order by s.id`);
      return rows.map((r) => ({ ...toScraper(r), lastScheduledFor: r.last_scheduled_for }));
    },

    async setWebhook(id, enabled, tokenHash) {
      await pool.query(sql.unsafe`
        update scrapers set webhook_enabled = ${enabled}, webhook_token_hash = ${tokenHash}, updated_at = now()
        where id = ${id}`);
    },

    async findByWebhookHash(tokenHash) {
      const found = await pool.maybeOne(
        sql.type(ScraperRecord)`select ${COLUMNS} from scrapers s where s.webhook_token_hash = ${tokenHash}`,
      );
      return found ? toScraper(found) : null;
    },

    async update(id, changes) {
      const sets = [];
      if (changes.enabled !== undefined) sets.push(sql.fragment`enabled = ${changes.enabled}`);
      if (changes.envVars !== undefined) sets.push(sql.fragment`env_vars = ${sql.jsonb(changes.envVars)}`);
      if (changes.targetDatasetId !== undefined)
        sets.push(sql.fragment`target_dataset_id = ${changes.targetDatasetId}`);
      if (changes.autoImport !== undefined) sets.push(sql.fragment`auto_import = ${changes.autoImport}`);
      if (changes.reviewDuplicates !== undefined)
        sets.push(sql.fragment`review_duplicates = ${changes.reviewDuplicates}`);
      if (changes.alertAfter !== undefined) sets.push(sql.fragment`alert_after = ${changes.alertAfter}`);
      if (sets.length === 0) return;
      await pool.query(sql.unsafe`
        update scrapers set ${sql.join(sets, sql.fragment`, `)}, updated_at = now() where id = ${id}`);
    },
  };
}
