import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { DomainError } from '../../../domain/errors.ts';
import type { Actor } from '../../../domain/scrapers/access.ts';
import type { ScraperUseCases } from '../../../application/scrapers/scraper-triggers.ts';
import { errorResponses } from '../error-body.ts';
import { USER_SECURITY } from '../openapi-document.ts';
import { viewerOf } from '../viewer.ts';
import { IdParams, QueuedRunBody, queuedScraperRunDoc, SyncQueuedBody } from './scraper-schemas.ts';

// Scraper triggers of the main application (spec: Scraper endpoints). Who is calling comes from
// `authenticate`: by default `viewerOf`, the user that the accounts hooks set (the `payload-token`
// session cookie or a bearer token); without those hooks nobody is authenticated and the answer is 401.

export type Authenticate = (request: FastifyRequest) => Promise<Actor | null> | Actor | null;

type ScraperRouteOptions = {
  /** Absent in a process built without the scraper subsystem: the routes answer 503. */
  scrapers: ScraperUseCases | undefined;
  authenticate?: Authenticate;
};

export const scraperRoutes: FastifyPluginAsync<ScraperRouteOptions> = async (app, options) => {
  const authenticate = options.authenticate ?? viewerOf;

  const actorOf = async (request: FastifyRequest): Promise<Actor> => {
    const actor = await authenticate(request);
    if (!actor)
      throw new DomainError('unauthorized', 'log in or send a bearer token', { code: 'UNAUTHORIZED' });
    return actor;
  };
  const useCases = (): ScraperUseCases => {
    if (!options.scrapers) {
      throw new DomainError('unavailable', 'the scraper subsystem is not set up in this process', {
        code: 'SCRAPERS_UNAVAILABLE',
      });
    }
    return options.scrapers;
  };

  app.post<{ Params: { id: number } }>(
    '/api/scrapers/:id/run',
    {
      // Who is calling comes first: 401 before the id is even validated.
      preValidation: async (request) => void (await actorOf(request)),
      schema: {
        // actorOf, not config.requiresUser: the caller may come from an injected authenticate.
        security: USER_SECURITY,
        tags: ['scrapers'],
        summary: 'Queue a run of a scraper now',
        description:
          'The repo owner (trust level 3 or more) or an admin. 429 with the rate-limit body when the daily runs quota is spent.',
        params: IdParams,
        // 429: the spec's rate-limit error, built by sendRateLimited (documented as RateLimitBody).
        response: { 200: QueuedRunBody, ...errorResponses(400, 401, 403, 404, 429, 503) },
      },
    },
    async (request) => {
      const actor = await actorOf(request);
      // A spent daily runs quota is a DailyQuotaExceededError: the error handler answers the spec's 429.
      const { run, jobId } = await useCases().triggerRun(actor, request.params.id);
      return { message: 'run queued', jobId, run: queuedScraperRunDoc(run) };
    },
  );

  app.post<{ Params: { id: number } }>(
    '/api/scraper-repos/:id/sync',
    {
      preValidation: async (request) => void (await actorOf(request)),
      schema: {
        // actorOf, not config.requiresUser: the caller may come from an injected authenticate.
        security: USER_SECURITY,
        tags: ['scrapers'],
        summary: "Queue a sync of a scraper repo's manifest",
        description: 'The repo owner or an admin. Rapid requests collapse into one sync.',
        params: IdParams,
        response: { 200: SyncQueuedBody, ...errorResponses(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      const actor = await actorOf(request);
      const queued = await useCases().requestSync(actor, request.params.id);
      return {
        message: 'sync queued',
        repo: queued.repoId,
        jobId: queued.jobId,
        syncStatus: queued.syncStatus,
      };
    },
  );
};
