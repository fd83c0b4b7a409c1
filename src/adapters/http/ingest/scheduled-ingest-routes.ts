import type { FastifyPluginAsync, FastifyRequest } from 'fastify';

import {
  createScheduledIngest,
  getScheduledIngest,
  triggerScheduledIngest,
  updateScheduledIngest,
} from '../../../application/ingest/scheduled-ingests.ts';
import { parseReviewDuplicates } from '../../../domain/ingest/review.ts';
import { parseIngestSettings } from '../../../domain/ingest/settings.ts';
import { errorResponses } from '../error-body.ts';
import { scheduledRunDoc } from './ingest-schemas.ts';
import { IdParams } from '../schemas.ts';
import { USER_ONLY } from '../require-user.ts';
import type { IngestHttpDeps } from './ingest-file-routes.ts';
import { viewerOf } from '../viewer.ts';
import type { ScraperUseCases } from '../../../application/scrapers/scraper-triggers.ts';
import { webhookTriggerRoute } from '../webhook-routes.ts';
import { webhookUrl } from '../public-url.ts';
import {
  NoQuery,
  Saved,
  ScheduleDoc,
  ScheduledIngestChange,
  ScheduledIngestCreate,
  ScheduledRunStarted,
  scheduleDoc,
} from './scheduled-ingest-schemas.ts';

// Scheduled URL imports (`scheduled-ingests`, alias `scheduled-imports`). Creating one needs write
// access to the target catalog; the rest is for the creator, the catalog's owner and admins (401
// anonymous, 404 for others). Their webhook trigger, shared with scrapers, is in
// webhook-routes.ts (top of the http folder).

const withToken = (request: FastifyRequest, token: string | null) =>
  token ? { webhookToken: token, webhookUrl: webhookUrl(request, token) } : {};

type ScheduledIngestRouteOptions = {
  ingest: IngestHttpDeps;
  /** Scrapers share the webhook endpoint; their lookup goes first, scheduled imports second. */
  triggerScraperWebhook?: ScraperUseCases['triggerWebhook'];
};

export const scheduledIngestRoutes: FastifyPluginAsync<ScheduledIngestRouteOptions> = async (
  app,
  { ingest, triggerScraperWebhook },
) => {
  const deps = ingest.schedules;
  for (const base of ['/api/scheduled-ingests', '/api/scheduled-imports']) {
    const tags = ['ingestion'];
    app.post(
      base,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: 'Create a scheduled URL import',
          description:
            'Fetches `url` on a five-field UTC cron `schedule` (checked every 60 s; null for webhook and manual runs only) and ' +
            'imports it like an upload, through the needs-review stage. The answer carries the webhook token once. ' +
            'Needs write access to the catalog (its owner or an admin): 404 for a catalog the caller cannot see, 403 for one they cannot change.',
          querystring: NoQuery,
          body: ScheduledIngestCreate,
          response: { 201: Saved, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request, reply) => {
        const body = request.body as {
          name: string;
          url: string;
          schedule?: string | null;
          enabled?: boolean;
          catalog: number;
          dataset?: number | null;
          settings?: Record<string, unknown>;
          reviewDuplicates?: string;
        };
        const { schedule, webhookToken } = await createScheduledIngest(deps, viewerOf(request), {
          name: body.name,
          url: body.url,
          schedule: body.schedule ?? null,
          enabled: body.enabled ?? true,
          catalogId: body.catalog,
          datasetId: body.dataset ?? null,
          settings: parseIngestSettings(body.settings, undefined),
          reviewDuplicates: parseReviewDuplicates(body.reviewDuplicates),
        });
        return reply.status(201).send({
          doc: scheduleDoc(schedule),
          message: 'Scheduled import created',
          ...withToken(request, webhookToken),
        });
      },
    );

    app.get(
      `${base}/:id`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: 'A scheduled URL import',
          params: IdParams,
          querystring: NoQuery,
          response: { 200: ScheduleDoc, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { id } = request.params as { id: number };
        return scheduleDoc(await getScheduledIngest(deps, viewerOf(request), id));
      },
    );

    app.patch(
      `${base}/:id`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary:
            'Change a scheduled import: name, URL, schedule, settings, reviewDuplicates, target, enabled',
          description:
            'Only the fields sent change, all or nothing: a bad field (400) or target (403/404) changes nothing. ' +
            '`url` gets the checks of creation (http or https, no credentials); `settings` is validated and ' +
            'replaces the stored settings as a whole; a new `catalog` or `dataset` needs write access to the catalog, ' +
            'as on creation (404 for a catalog the caller cannot see, 403 for one they cannot change), and a new ' +
            '`catalog` without `dataset` imports into a new dataset there. ' +
            'Disabling revokes the webhook token; enabling issues a new one, returned once.',
          params: IdParams,
          querystring: NoQuery,
          body: ScheduledIngestChange,
          response: { 200: Saved, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (request) => {
        const { id } = request.params as { id: number };
        const body = request.body as {
          name?: string;
          url?: string;
          schedule?: string | null;
          enabled?: boolean;
          catalog?: number;
          dataset?: number | null;
          settings?: Record<string, unknown>;
          reviewDuplicates?: string;
        };
        const { schedule, webhookToken } = await updateScheduledIngest(deps, viewerOf(request), id, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.schedule !== undefined ? { schedule: body.schedule } : {}),
          ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
          ...(body.catalog !== undefined ? { catalogId: body.catalog } : {}),
          ...(body.dataset !== undefined ? { datasetId: body.dataset } : {}),
          ...(body.settings !== undefined ? { settings: parseIngestSettings(body.settings, undefined) } : {}),
          ...(body.reviewDuplicates !== undefined
            ? { reviewDuplicates: parseReviewDuplicates(body.reviewDuplicates) }
            : {}),
        });
        return { doc: scheduleDoc(schedule), message: 'Updated', ...withToken(request, webhookToken) };
      },
    );

    app.post(
      `${base}/:id/trigger`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: 'Run a scheduled import now',
          params: IdParams,
          querystring: NoQuery,
          response: {
            202: ScheduledRunStarted,
            ...errorResponses(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params as { id: number };
        const run = await triggerScheduledIngest(deps, viewerOf(request), id);
        return reply.status(202).send({ success: true, run: scheduledRunDoc(run) });
      },
    );
  }

  // The shared webhook route, registered here (after the routes above) so the routes' order, and
  // the OpenAPI document, stay as they were.
  webhookTriggerRoute(app, { schedules: deps, triggerScraperWebhook });
};
