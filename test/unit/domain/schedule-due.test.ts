import t from 'tap';
import { cronerSchedule } from '../../../src/adapters/jobs/croner-schedule.ts';
import { dueTime } from '../../../src/domain/schedule-due.ts';

// The one due-time rule of every schedule (scrapers: `after` the schedule's start and the last due
// time run; scheduled imports: `from` their next run time).

const at = (iso: string) => new Date(iso);
const previous = cronerSchedule.previous;

t.test('the latest occurrence, once, never before the schedule began (scrapers)', async (t) => {
  const schedule = '*/5 * * * *';
  const since = at('2026-01-01T09:00:00Z');
  t.same(
    dueTime({ schedule, after: [since, null] }, at('2026-01-01T10:07:30Z'), previous),
    at('2026-01-01T10:05:00Z'),
  );
  t.same(
    dueTime({ schedule, after: [since, null] }, at('2026-01-01T10:05:00Z'), previous),
    at('2026-01-01T10:05:00Z'),
    'due at its exact minute',
  );
  const ran = { schedule, after: [since, at('2026-01-01T10:05:00Z')] };
  t.equal(dueTime(ran, at('2026-01-01T10:09:59Z'), previous), null, 'that due time ran already');
  t.same(dueTime(ran, at('2026-01-01T10:10:01Z'), previous), at('2026-01-01T10:10:00Z'));
  t.same(
    dueTime(ran, at('2026-01-02T10:10:01Z'), previous),
    at('2026-01-02T10:10:00Z'),
    'a day of missed minutes runs once, for the latest',
  );
  t.equal(
    dueTime({ schedule, after: [at('2026-01-01T10:06:00Z'), null] }, at('2026-01-01T10:07:00Z'), previous),
    null,
    'no due time before the schedule began',
  );
  const daily = { schedule: '0 3 * * *', after: [at('2026-01-01T00:00:00Z')] };
  t.same(
    dueTime(daily, at('2026-01-01T03:00:30Z'), previous),
    at('2026-01-01T03:00:00Z'),
    'UTC, not local time',
  );
  t.equal(dueTime(daily, at('2026-01-01T02:59:59Z'), previous), null);
});

t.test('scheduled imports: from the next run time on, always the latest minute due', async (t) => {
  const schedule = '* * * * *';
  const from = at('2026-01-01T10:00:00Z');
  t.same(
    dueTime({ schedule, from }, at('2026-01-01T10:00:00Z'), previous),
    from,
    'the next run time itself is due',
  );
  t.equal(dueTime({ schedule, from }, at('2026-01-01T09:59:59Z'), previous), null, 'not before it');
  t.same(
    dueTime({ schedule, from }, at('2026-01-01T10:01:05Z'), previous),
    at('2026-01-01T10:01:00Z'),
    'a pass late by a minute (or after a pass that died before moving the next run time on) runs the minute now due, not the one before',
  );
  t.equal(
    dueTime(
      { schedule: '*/5 * * * *', from: at('2026-01-01T10:05:00Z') },
      at('2026-01-01T10:04:00Z'),
      previous,
    ),
    null,
  );
});
