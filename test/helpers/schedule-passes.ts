import type { Test } from 'tap';
import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';

// Whether a schedule ran each due minute depends on whether a pass of the schedule manager ran in
// that minute, and how late pg-boss's cron and workers run on a busy machine is not ours to assert.
// What is ours: a pass that runs within a minute runs that minute's due time (the latest, by
// src/domain/schedule-due.ts), whatever an earlier pass did or how it died. pg-boss keeps the
// completed passes, so tests can hold a skipped minute against the passes that actually ran.

const MINUTE = 60_000;
const Pass = row(Type.Object({ started: Type.Number(), completed: Type.Number() }));

/** The starts of the minutes in which a whole pass of `schedule-manager-job` ran and completed. */
async function minutesWithManagerPass(pool: DatabasePool): Promise<Set<number>> {
  const passes = await pool.any(sql.type(Pass)`
      select (extract(epoch from started_on) * 1000)::float8 as started,
             (extract(epoch from completed_on) * 1000)::float8 as completed
      from pgboss.job where name = 'schedule-manager-job' and state = 'completed'`);
  return new Set(
    passes
      .filter((p) => Math.floor(p.started / MINUTE) === Math.floor(p.completed / MINUTE))
      .map((p) => Math.floor(p.started / MINUTE) * MINUTE),
  );
}

/** The whole minutes from the first to the last due time that have no run. */
function minutesWithoutRun(due: readonly number[]): number[] {
  const skipped: number[] = [];
  for (let minute = due[0] ?? 0; minute <= (due.at(-1) ?? 0); minute += MINUTE) {
    if (!due.includes(minute)) skipped.push(minute);
  }
  return skipped;
}

/**
 * A schedule due every minute, run by the schedule managers of `pool`'s database: each run is for a
 * whole minute, in order, none twice, and every minute in which a whole manager pass ran has its run.
 */
export async function assertEachMinuteRunOnce(t: Test, pool: DatabasePool, due: readonly number[]) {
  t.same(
    due.filter((d, i) => d % MINUTE !== 0 || (i > 0 && d <= (due[i - 1] ?? 0))),
    [],
    'one run per due minute, in order, none twice',
  );
  const minutesWithPass = await minutesWithManagerPass(pool);
  const skipped = minutesWithoutRun(due);
  t.comment(
    `manager passes ran within ${minutesWithPass.size} minutes; minutes without a run: ${skipped.length}`,
  );
  t.ok(minutesWithPass.size >= 1, 'pg-boss recorded the passes that ran within a minute');
  t.same(
    skipped.filter((minute) => minutesWithPass.has(minute)),
    [],
    'none missing in between: every minute in which a manager pass ran has its run',
  );
}
