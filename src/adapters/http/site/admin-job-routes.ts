import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  type AdminJobsDeps,
  jobQueueSummary,
  queueScheduleService,
  runDueJobsNow,
  scheduleServiceStatus,
} from '../../../application/site/admin-jobs.ts';
import { errorResponses } from '../error-body.ts';
import { viewerOf } from '../viewer.ts';
import { QueueDoc, ScheduleServiceDoc } from './admin-job-schemas.ts';

// Admin views of the background work: the schedule manager's status (and a pass queued now), the
// pg-boss queues' counts and oldest waiting job, and running deferred jobs now outside production.

const admin = { rateLimit: true, requiresUser: true } as const;
const NoQuery = Type.Object({}, { additionalProperties: false });
const tags = ['system'];

export const adminJobRoutes: FastifyPluginAsync<{ adminJobs: AdminJobsDeps }> = async (
  app,
  { adminJobs },
) => {
  app.get(
    '/api/admin/schedule-service',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Status of the schedule manager (admins)',
        description:
          'The every-minute schedule-manager-job: whether its cron is registered, its next and last run, queued and active passes.',
        querystring: NoQuery,
        response: { 200: ScheduleServiceDoc, ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => scheduleServiceStatus(adminJobs, viewerOf(request)),
  );

  app.post(
    '/api/admin/schedule-service',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Queue a schedule manager pass now (admins)',
        description: '`queued: false` when a pass is queued already (one at a time); a worker runs it.',
        querystring: NoQuery,
        response: {
          202: Type.Object({ queued: Type.Boolean(), status: ScheduleServiceDoc }),
          ...errorResponses(401, 403, 429),
        },
      },
    },
    async (request, reply) =>
      reply.status(202).send(await queueScheduleService(adminJobs, viewerOf(request))),
  );

  app.get(
    '/api/admin/jobs',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Counts of every job queue (admins)',
        description:
          'Per pg-boss queue: queued, ready, deferred, active, failed and total jobs, and the oldest waiting one.',
        querystring: NoQuery,
        response: { 200: Type.Object({ queues: Type.Array(QueueDoc) }), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => ({ queues: await jobQueueSummary(adminJobs, viewerOf(request)) }),
  );

  app.post(
    '/api/admin/jobs/run',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Run waiting jobs now (admins, not in production)',
        description:
          'Moves the start of every deferred job (retry backoff, start-after) to now, so the workers take them at their next poll. ' +
          '403 NOT_IN_PRODUCTION when NODE_ENV=production.',
        querystring: NoQuery,
        response: { 200: Type.Object({ started: Type.Number() }), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => runDueJobsNow(adminJobs, viewerOf(request)),
  );
};
