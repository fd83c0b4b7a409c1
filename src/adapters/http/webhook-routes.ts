import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { type ScheduleDeps, triggerByWebhook } from '../../application/ingest/scheduled-ingests.ts';
import { errorResponses } from './error-body.ts';
import { ScheduledRunDoc, scheduledRunDoc } from './ingest/ingest-schemas.ts';
import type { ScraperUseCases } from '../../application/scrapers/scraper-triggers.ts';
import { QueuedScraperRunDoc, queuedScraperRunDoc } from './scrapers/scraper-schemas.ts';

// POST /api/webhooks/trigger/{token}, the one webhook endpoint of scrapers and scheduled imports, at the
// top of the http folder because it answers for both features (the ingest routes register it)
// (spec §Scraper endpoints: "the token is resolved to the right resource type"). Public: the 64-hex
// token in the path is the credential. Scrapers are asked first, scheduled imports second; a token
// neither claims is a 404. Refusals are the error handler's: a spent daily runs quota is the spec's
// rate-limit error (sendRateLimited), like every other 429.

type WebhookRouteDeps = {
  schedules: ScheduleDeps;
  /** Absent in a process built without the scraper subsystem: only scheduled imports answer. */
  triggerScraperWebhook?: ScraperUseCases['triggerWebhook'] | undefined;
};

const NoQuery = Type.Object({}, { additionalProperties: false });

export function webhookTriggerRoute(app: FastifyInstance, deps: WebhookRouteDeps): void {
  app.post(
    '/api/webhooks/trigger/:token',
    {
      schema: {
        tags: ['ingestion'],
        summary: "Trigger a scraper's run or a scheduled import by its webhook token",
        description:
          'No header: the 64-hex token in the URL is the credential. A scraper webhook queues a run ' +
          '(`run.scraper`); a scheduled-import webhook starts a run (`run.scheduledIngest`); 200 with the queued job. ' +
          '404 for an unknown or disabled token; 403 while scrapers are switched off; 429, the rate-limit error ' +
          '(limitType daily), when the owner has no scraper runs left today.',
        params: Type.Object({ token: Type.String({ maxLength: 128 }) }, { additionalProperties: false }),
        querystring: NoQuery,
        response: {
          200: Type.Union([
            Type.Object({
              success: Type.Literal(true),
              jobId: Type.Union([Type.String(), Type.Null()]),
              run: QueuedScraperRunDoc,
            }),
            Type.Object({ success: Type.Literal(true), run: ScheduledRunDoc }),
          ]),
          ...errorResponses(400, 403, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const { token } = request.params as { token: string };
      const scraperRun = deps.triggerScraperWebhook ? await deps.triggerScraperWebhook(token) : null;
      if (scraperRun) {
        return reply
          .status(200)
          .send({ success: true, jobId: scraperRun.jobId, run: queuedScraperRunDoc(scraperRun.run) });
      }
      const run = await triggerByWebhook(deps.schedules, token);
      return reply.status(200).send({ success: true, run: scheduledRunDoc(run) });
    },
  );
}
