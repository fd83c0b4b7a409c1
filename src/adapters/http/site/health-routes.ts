import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { checkHealth, type HealthDeps } from '../../../application/site/check-health.ts';
import { errorResponses } from '../error-body.ts';

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
  },
  { $id: 'HealthReport' },
);

export const healthRoutes: FastifyPluginAsync<{ health: HealthDeps }> = async (app, { health }) => {
  app.get(
    '/api/health',
    {
      schema: {
        tags: ['system'],
        summary: 'Service health',
        description:
          'Checks the database, migrations, PostGIS and the environment (and the scraper runner when configured). ' +
          '200 when healthy (warnings such as pending migrations or a degraded runner allowed), 503 on a critical error. ' +
          'A database that does not answer within 2 s is reported as an error (503) rather than waited for. ' +
          'For monitoring; a load balancer checks `/api/live`.',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: Type.Ref('HealthReport'), 503: Type.Ref('HealthReport'), ...errorResponses(400) },
      },
    },
    async (_request, reply) => {
      const { healthy, report } = await checkHealth(health);
      if (!healthy) reply.header('retry-after', '5');
      return reply.status(healthy ? 200 : 503).send(report);
    },
  );
  // For a load balancer's check: whether this process answers, and nothing else. /api/health asks
  // the database, so a slow primary failed every process's check at once and the balancer answered
  // 503 to everything, even what the answer cache could serve (issue 31 §3); whether the database
  // is well is /api/health's to say, and every route answers 503 by itself while it is not. A
  // process shutting down stops listening at once (its checks are refused) and answers 503 on the
  // connections it still holds (Fastify's return503OnClosing): no readiness state of our own.
  app.get(
    '/api/live',
    {
      schema: {
        tags: ['system'],
        summary: 'Liveness: this process answers',
        description:
          'No database round trip: 200 whenever the process can answer a request. For load balancer checks; ' +
          '`/api/health` is the full report.',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false }),
          ...errorResponses(400),
        },
      },
    },
    async () => ({ status: 'ok' as const }),
  );
};
