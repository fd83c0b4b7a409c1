import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ListQuery } from '../../../application/collections/collection-documents.ts';
import {
  cancelRunDocument,
  createRepoDocument,
  deleteRepoDocument,
  listScraperDocuments,
  readScraperDocument,
  type RepoInput,
  type ScraperCollectionDeps,
  type ScraperInput,
  updateRepoDocument,
  updateScraperDocument,
} from '../../../application/scrapers/scraper-collections.ts';
import type { ScraperCollectionSlug } from '../../../domain/collections/collections.ts';
import { ForbiddenError } from '../../../domain/access.ts';
import { errorResponses } from '../error-body.ts';
import { ListQuerySchema, PageSchema } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import {
  DepthQuery,
  IdParams,
  NoQuery,
  RepoCreate,
  RepoUpdate,
  ScraperRepoSaved,
  ScraperRunCancelled,
  ScraperSaved,
  ScraperUpdate,
} from './scraper-collection-schemas.ts';

// The scraper collections in Payload's REST shape (spec: `/api/{collection}`): scraper-repos,
// scrapers and scraper-runs. Only the repo owner (trust level 3 or more) and admins see anything;
// levels 0-2 get 403, anonymous callers 401. Scrapers come from a repo's scrapers.yml and runs
// from triggers, so neither is created here.

const tags = ['scrapers'];
// Every scraper route needs a login: 401 before the request is validated or looked up.
const config = { rateLimit: true, requiresUser: true };

const LABELS: Record<ScraperCollectionSlug, string> = {
  'scraper-repos': 'scraper repo',
  scrapers: 'scraper',
  'scraper-runs': 'scraper run',
};
const DOCS: Record<ScraperCollectionSlug, string> = {
  'scraper-repos': 'ScraperRepoDoc',
  scrapers: 'ScraperDoc',
  'scraper-runs': 'ScraperRunDoc',
};

export const scraperCollectionRoutes: FastifyPluginAsyncTypebox<ScraperCollectionDeps> = async (
  app,
  deps,
) => {
  for (const collection of Object.keys(LABELS) as ScraperCollectionSlug[]) {
    const docRef = Type.Ref(DOCS[collection]);
    app.get(
      `/api/${collection}`,
      {
        config,
        schema: {
          tags,
          summary: `List ${collection}`,
          description:
            "The caller's own (admins: all). Large fields (code, stdout, stderr, resultFile) only on a single document. " +
            '401 anonymous, 403 below trust level 3.',
          querystring: ListQuerySchema(collection),
          response: {
            200: PageSchema(docRef),
            ...errorResponses(400, 401, 403, 429),
          },
        },
      },
      async (request) =>
        listScraperDocuments(deps, collection, viewerOf(request), request.query as ListQuery),
    );
    app.get(
      `/api/${collection}/:id`,
      {
        config,
        schema: {
          tags,
          summary: `Read one ${LABELS[collection]}`,
          description: "404 also for another user's document.",
          params: IdParams,
          querystring: DepthQuery,
          response: { 200: docRef, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => readScraperDocument(deps, collection, viewerOf(request), request.params.id),
    );
  }

  const repoOne = Type.Object({ doc: Type.Ref('ScraperRepoDoc'), message: Type.String() });

  app.post(
    '/api/scraper-repos',
    {
      config,
      schema: {
        tags,
        summary: 'Create a scraper repo',
        description:
          'Trust level 3 or more, or an admin, with enableScrapers on (403 SCRAPERS_DISABLED otherwise); level 3 may ' +
          'own 3 repos and level 4 ten (403 SCRAPER_REPOS_QUOTA_EXCEEDED). A sync of its scrapers.yml is queued.',
        querystring: NoQuery,
        body: RepoCreate,
        response: { 201: repoOne, ...errorResponses(400, 401, 403, 409, 413, 429) },
      },
    },
    async (request, reply) => {
      const doc = await createRepoDocument(deps, viewerOf(request), request.body as RepoInput);
      return reply.status(201).send({ doc, message: 'Scraper repo successfully created; sync queued.' });
    },
  );

  app.patch(
    '/api/scraper-repos/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Update a scraper repo',
        description:
          'The owner or an admin. A change of sourceType, gitUrl, gitBranch or code queues one sync (syncQueued); ' +
          'rapid edits collapse into one.',
        params: IdParams,
        querystring: NoQuery,
        body: RepoUpdate,
        response: {
          200: ScraperRepoSaved,
          ...errorResponses(400, 401, 403, 404, 409, 413, 429),
        },
      },
    },
    async (request) => {
      const { doc, syncQueued } = await updateRepoDocument(
        deps,
        viewerOf(request),
        request.params.id,
        request.body as RepoInput,
      );
      return { doc, message: 'Updated successfully.', syncQueued };
    },
  );

  app.delete(
    '/api/scraper-repos/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a scraper repo',
        description:
          'The owner or an admin; deletes its scrapers and their runs. 409 SCRAPER_RUNNING while one of its ' +
          'scrapers runs: cancel the run (POST /api/scraper-runs/{id}/cancel) or wait for it.',
        params: IdParams,
        querystring: NoQuery,
        response: { 200: repoOne, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      const doc = await deleteRepoDocument(deps, viewerOf(request), request.params.id);
      return { doc, message: 'Deleted successfully.' };
    },
  );

  app.patch(
    '/api/scrapers/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Update the user-set fields of a scraper',
        description:
          'enabled, envVars, targetDataset, autoImport, reviewDuplicates and the webhook. The other fields come from scrapers.yml and ' +
          'change with a sync. Turning the webhook on, or rotateWebhookToken, answers the token once in ' +
          'webhookToken (64 hex); only its hash is stored. Turning it off and on again rotates it.',
        params: IdParams,
        querystring: NoQuery,
        body: ScraperUpdate,
        response: {
          200: ScraperSaved,
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request) => {
      const { doc, webhookToken } = await updateScraperDocument(
        deps,
        viewerOf(request),
        request.params.id,
        request.body as ScraperInput,
      );
      return { doc, message: 'Updated successfully.', ...(webhookToken ? { webhookToken } : {}) };
    },
  );

  app.post(
    '/api/scraper-runs/:id/cancel',
    {
      config,
      schema: {
        tags,
        summary: 'Cancel a queued or running scraper run',
        description:
          'The owner or an admin. The run ends failed with errorCode CANCELLED and the runner stops its container; ' +
          'cancelled is false when the run had already finished.',
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: ScraperRunCancelled,
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request) => {
      const { doc, cancelled } = await cancelRunDocument(deps, viewerOf(request), request.params.id);
      return { doc, cancelled, message: cancelled ? 'Run cancelled.' : 'The run had already finished.' };
    },
  );

  // Payload answers a denied create access rule with 403; these say where the records come from.
  const refusals: [string, 'POST' | 'DELETE', string, string][] = [
    [
      '/api/scrapers',
      'POST',
      "Scrapers are created by the sync of their repo's scrapers.yml: declare them there",
      'SCRAPERS_FROM_MANIFEST',
    ],
    [
      '/api/scrapers/:id',
      'DELETE',
      "Scrapers are deleted by the sync of their repo's scrapers.yml: remove them there",
      'SCRAPERS_FROM_MANIFEST',
    ],
    [
      '/api/scraper-runs',
      'POST',
      'Runs are created by POST /api/scrapers/{id}/run, a schedule or a webhook',
      'RUNS_FROM_TRIGGERS',
    ],
  ];
  for (const [url, method, message, code] of refusals) {
    app.route({
      method,
      url,
      config,
      schema: {
        tags,
        summary: `Not allowed: ${code === 'SCRAPERS_FROM_MANIFEST' ? 'scrapers follow scrapers.yml' : 'runs come from triggers'}`,
        description: `Always 403 ${code}.`,
        response: errorResponses(403, 429),
      },
      handler: async () => {
        throw new ForbiddenError(message, code);
      },
    });
  }
};
