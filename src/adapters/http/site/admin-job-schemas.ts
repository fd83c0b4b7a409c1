import { Type } from 'typebox';

// The schemas of the admin job views (admin-job-routes.ts): the schedule manager and the queues.
const NullableString = Type.Union([Type.String(), Type.Null()]);

export const ScheduleServiceDoc = Type.Object({
  queue: Type.String(),
  enabled: Type.Boolean({ description: 'A worker process registered the every-minute cron' }),
  cron: NullableString,
  nextRunAt: NullableString,
  lastRun: Type.Union([
    Type.Object({
      state: Type.String(),
      createdAt: Type.String(),
      startedAt: NullableString,
      completedAt: NullableString,
    }),
    Type.Null(),
  ]),
  queued: Type.Number(),
  active: Type.Number(),
});

export const QueueDoc = Type.Object({
  name: Type.String(),
  queued: Type.Number(),
  ready: Type.Number(),
  deferred: Type.Number(),
  active: Type.Number(),
  failed: Type.Number(),
  total: Type.Number(),
  oldestQueuedAt: NullableString,
  oldestAgeSeconds: Type.Union([Type.Number(), Type.Null()]),
});
