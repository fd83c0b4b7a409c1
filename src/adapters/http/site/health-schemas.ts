import { Type } from 'typebox';

// The schema of the health report (health-routes.ts).
const Status = (values: string[]) => Type.Union(values.map((value) => Type.Literal(value)));

export const HealthReportSchema = Type.Object(
  {
    database: Type.Object({ status: Status(['ok', 'error']), message: Type.Optional(Type.String()) }),
    migrations: Type.Object({
      status: Status(['ok', 'pending', 'error']),
      pending: Type.Optional(Type.Array(Type.String())),
      message: Type.Optional(Type.String()),
    }),
    postgis: Type.Object({
      status: Status(['ok', 'not found', 'error']),
      version: Type.Optional(Type.String()),
      message: Type.Optional(Type.String()),
    }),
    environment: Type.Object({
      status: Status(['ok', 'error']),
      missing: Type.Optional(Type.Array(Type.String())),
      conflicts: Type.Optional(
        Type.Array(Type.String(), { description: 'Settings that contradict each other, in words.' }),
      ),
    }),
    runner: Type.Optional(
      Type.Object(
        {
          status: Status(['ok', 'degraded']),
          url: Type.String(),
          message: Type.Optional(Type.String()),
          activeRuns: Type.Optional(Type.Number()),
        },
        { description: 'Present only when SCRAPER_RUNNER_URL is set; an unreachable runner is degraded.' },
      ),
    ),
    replicas: Type.Optional(
      Type.Array(
        Type.Object({
          status: Status(['ok', 'lagging', 'down']),
          name: Type.String(),
          lagSeconds: Type.Optional(
            Type.Number({
              minimum: 0,
              description:
                'How old its data may be, at most (0: it has replayed all the primary had written). Above REPLICA_MAX_LAG_SECONDS it is lagging.',
            }),
          ),
          lagBytes: Type.Optional(Type.Integer({ minimum: 0 })),
        }),
        {
          description:
            'Present only when DATABASE_READ_URLS is set: each hot standby as the last probe (every 0.5 s) found it. ' +
            'A standby that does not answer within REPLICA_TIMEOUT_MS is down. ' +
            'A lagging or down standby is a warning: its reads go to the primary.',
        },
      ),
    ),
    email: Type.Optional(
      Type.Object(
        {
          status: Status(['ok', 'degraded', 'error']),
          message: Type.Optional(Type.String()),
          queued: Type.Optional(Type.Integer({ minimum: 0, description: 'Mails waiting to be sent.' })),
          oldestQueuedSeconds: Type.Optional(
            Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
              description: 'Seconds since the oldest waiting mail was queued (null: none waits).',
            }),
          ),
          recentSent: Type.Optional(Type.Integer({ minimum: 0 })),
          recentFailures: Type.Optional(
            Type.Integer({
              minimum: 0,
              description: 'Mails of the last hour given up or waiting for a retry after a failed send.',
            }),
          ),
        },
        {
          description:
            'Present only when SMTP_URL is set: the outbox. Degraded (a warning) when a due mail waited more than 15 minutes, or every send of the last hour failed.',
        },
      ),
    ),
  },
  { $id: 'HealthReport' },
);
