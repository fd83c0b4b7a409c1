import type { PgBoss } from 'pg-boss';
import { Type } from 'typebox';
import type { JobQueueStatus } from '../../ports/site/job-queue-status.ts';
import { type DatabasePool, row, sql } from '../postgres/database.ts';
import { QUEUES, SCHEDULE_MANAGER_QUEUE } from './job-queue.ts';

// The admin's view of pg-boss. The counts are read live from its job table (the `pgboss` schema) on
// the HTTP pool, so they have that pool's statement timeout (pg-boss's own getQueues() answers the
// counts its monitor cached, which only worker processes keep current). Sending and the cron
// registry go through pg-boss; runDueJobs only moves the start of waiting jobs of our own queues.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) =>
  Type.Union([schema, Type.Null()]);

const CountsRow = row(
  Type.Object({
    name: Type.String(),
    queued: Type.Number(),
    deferred: Type.Number(),
    active: Type.Number(),
    failed: Type.Number(),
    total: Type.Number(),
    oldest: Nullable(Type.String()),
  }),
);

const RunRow = row(
  Type.Object({
    state: Type.String(),
    created_on: Type.String(),
    started_on: Nullable(Type.String()),
    completed_on: Nullable(Type.String()),
  }),
);

const WAITING = sql.fragment`state in ('created', 'retry')`;

export function pgBossJobQueueStatus(boss: PgBoss, pool: DatabasePool): JobQueueStatus {
  const names = QUEUES.map((queue) => queue.name);
  const counts = (queues: string[]) =>
    pool.any(sql.type(CountsRow)`
      select name,
             count(*) filter (where ${WAITING})::int as queued,
             count(*) filter (where ${WAITING} and start_after > now())::int as deferred,
             count(*) filter (where state = 'active')::int as active,
             count(*) filter (where state = 'failed')::int as failed,
             count(*)::int as total,
             to_char(min(created_on) filter (where ${WAITING}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as oldest
      from pgboss.job where name = any(${sql.array(queues, 'text')}) group by name`);
  return {
    async queues() {
      const rows = await counts(names);
      return names.map((name) => {
        const r = rows.find((candidate) => candidate.name === name);
        return {
          name,
          queued: r?.queued ?? 0,
          ready: (r?.queued ?? 0) - (r?.deferred ?? 0),
          deferred: r?.deferred ?? 0,
          active: r?.active ?? 0,
          failed: r?.failed ?? 0,
          total: r?.total ?? 0,
          oldestQueuedAt: r?.oldest ?? null,
        };
      });
    },

    async scheduleManager() {
      const [schedule] = await boss.getSchedules(SCHEDULE_MANAGER_QUEUE);
      const last = await pool.maybeOne(sql.type(RunRow)`
        select state::text, created_on, started_on, completed_on from pgboss.job
        where name = ${SCHEDULE_MANAGER_QUEUE} and started_on is not null order by started_on desc limit 1`);
      const [now] = await counts([SCHEDULE_MANAGER_QUEUE]);
      return {
        queue: SCHEDULE_MANAGER_QUEUE,
        cron: schedule?.cron ?? null,
        lastRun: last
          ? {
              state: last.state,
              createdAt: last.created_on,
              startedAt: last.started_on,
              completedAt: last.completed_on,
            }
          : null,
        queued: now?.queued ?? 0,
        active: now?.active ?? 0,
      };
    },

    async queueScheduleManager() {
      return (await boss.send(SCHEDULE_MANAGER_QUEUE, {})) !== null;
    },

    async runDueJobs() {
      const moved = await pool.any(sql.type(row(Type.Object({ id: Type.String() })))`
        update pgboss.job set start_after = now()
        where name = any(${sql.array(names, 'text')}) and ${WAITING} and start_after > now()
        returning id::text`);
      return moved.length;
    },
  };
}
