import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { checkHealth, type HealthDeps } from '../../../application/site/check-health.ts';
import { errorResponses } from '../error-body.ts';
import {} from './health-schemas.ts';

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
