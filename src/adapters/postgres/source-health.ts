import type { CommonQueryMethods } from 'slonik';
import { Type } from 'typebox';
import {
  advanceHealth,
  healthNotice,
  type RunHealth,
  type SourceHealth,
} from '../../domain/source-health.ts';
import { Nullable, row, sql } from './database.ts';
import { queueSourceHealthMails } from './email/email-store.ts';

// Source health (issue 39 §3) kept on the source's row, in the transaction that records the run:
// the row is locked, advanceHealth decides the new streak and whether this run tells the owner, and
// the notice is written with it, so two runs finishing at once cannot both alert (or neither).

type HealthSource = { kind: 'schedule' | 'scraper'; id: number };

const HealthRow = Type.Object({
  name: Type.String(),
  owner: Nullable(Type.Number()),
  alert_after: Type.Number(),
  health_streak: Type.Number(),
  health_last: Nullable(Type.Union([Type.Literal('failed'), Type.Literal('empty')])),
  health_alerted: Type.Boolean(),
});

const COLUMNS = sql.fragment`alert_after, health_streak, health_last, health_alerted`;

export async function recordRunHealth(
  tx: CommonQueryMethods,
  source: HealthSource,
  run: RunHealth,
): Promise<SourceHealth | null> {
  const found =
    source.kind === 'schedule'
      ? await tx.maybeOne(sql.type(row(HealthRow))`
          select name, created_by as owner, ${COLUMNS} from scheduled_ingests where id = ${source.id} for update`)
      : await tx.maybeOne(sql.type(row(HealthRow))`
          select s.name, r.created_by as owner, s.alert_after, s.health_streak, s.health_last, s.health_alerted
          from scrapers s join scraper_repos r on r.id = s.repo_id where s.id = ${source.id} for update of s`);
  if (!found) return null;
  const { next, alert } = advanceHealth(
    { streak: found.health_streak, last: found.health_last, alerted: found.health_alerted },
    run,
    found.alert_after,
  );
  const table = sql.identifier([source.kind === 'schedule' ? 'scheduled_ingests' : 'scrapers']);
  await tx.query(sql.unsafe`
    update ${table} set health_streak = ${next.streak}, health_last = ${next.last},
                        health_alerted = ${next.alerted}
    where id = ${source.id}`);
  // A good run ends the streak: its notice is closed (the banner goes; the row stays as history).
  if (run === 'ok' && found.health_alerted)
    await tx.query(sql.unsafe`
      update account_notices set dismissed_at = now()
      where source_kind = ${source.kind} and source_id = ${source.id} and dismissed_at is null`);
  if (alert && found.owner !== null) {
    const message = healthNotice({ kind: source.kind, name: found.name }, next);
    await tx.query(sql.unsafe`
      insert into account_notices (user_id, kind, source_kind, source_id, message)
      values (${found.owner}, 'source-health', ${source.kind}, ${source.id}, ${message})`);
    // The same alert by e-mail, once per streak like the notice, queued in this transaction.
    await queueSourceHealthMails(tx, found.owner, message);
  }
  return next;
}

/**
 * A scheduled run's import ended (`completed`, or `failed` for good): its health. Completed with no
 * event created is a run that brought no new rows. Files that no scheduled run fetched are left alone.
 */
export async function recordScheduledImportHealth(
  tx: CommonQueryMethods,
  jobId: number,
  ended: 'completed' | 'failed',
): Promise<void> {
  const scheduleId = await tx.maybeOneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    select r.scheduled_ingest_id as id from ingest_jobs j
    join scheduled_ingest_runs r on r.ingest_file_id = j.ingest_file_id
    where j.id = ${jobId} limit 1`);
  if (scheduleId === null) return;
  let run: RunHealth = 'failed';
  if (ended === 'completed') {
    const created = await tx.maybeOneFirst(sql.type(row(Type.Object({ created: Type.Number() })))`
      select coalesce((counters->>'created')::bigint, 0)::int as created from ingest_job_stages
      where ingest_job_id = ${jobId} and stage = 'create-events'`);
    run = (created ?? 0) > 0 ? 'ok' : 'empty';
  }
  await recordRunHealth(tx, { kind: 'schedule', id: scheduleId }, run);
}
