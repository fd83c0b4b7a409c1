import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from 'typebox';
import type { ListQuery } from '../../../application/collections/collection-documents.ts';
import {
  cancelRunDocument,
  CODE_LIMITS,
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
import { ENV_VARS } from '../../../domain/scrapers/scrapers.ts';
import { REVIEW_DUPLICATES, type ReviewDuplicates } from '../../../domain/ingest/review.ts';
import { errorResponses } from '../error-body.ts';
import { ImportOutcomeDoc } from '../import-outcome-doc.ts';
import { ListQuerySchema, PageSchema } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';

// The scraper collections in Payload's REST shape (spec: `/api/{collection}`): scraper-repos,
// scrapers and scraper-runs. Only the repo owner (trust level 3 or more) and admins see anything;
// levels 0-2 get 403, anonymous callers 401. Scrapers come from a repo's scrapers.yml and runs
// from triggers, so neither is created here.

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });
const strict = { additionalProperties: false } as const;
/** An id or null to clear it; `const: null` because the app's type coercion would turn 0 into null. */
const NullableId = Type.Union([Type.Integer({ minimum: 1 }), Type.Unsafe<null>({ const: null })]);
const RunStatus = Type.Union(
  ['queued', 'running', 'success', 'failed', 'timeout'].map((status) => Type.Literal(status)),
);

const ReviewDuplicatesSchema = Type.Unsafe<ReviewDuplicates>({
  type: 'string',
  enum: [...REVIEW_DUPLICATES],
  description:
    'When a high duplicate rate stops an auto-import for review: `first-run` (default) counts rows the ' +
    'target dataset already holds only until one auto-import of this scraper completed there, later runs ' +
    'only rows repeated in the output; `always` counts both on every run; `never` does not review duplicates.',
});

const ScraperRepoDoc = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    slug: Type.String(),
    sourceType: Type.Union([Type.Literal('git'), Type.Literal('upload')]),
    gitUrl: Nullable(Type.String()),
    gitBranch: Nullable(Type.String()),
    code: Type.Optional(
      Nullable(Type.Record(Type.String(), Type.String(), { description: 'On a single repo only' })),
    ),
    fileCount: Type.Optional(
      Nullable(Type.Integer({ description: 'In lists, instead of the code: its number of files' })),
    ),
    catalog: Nullable(Type.Integer()),
    createdBy: Nullable(Type.Integer()),
    syncStatus: Type.Union(
      ['pending', 'syncing', 'synced', 'failed'].map((status) => Type.Literal(status)),
      {
        description:
          'pending: a sync is queued; syncing: the sync job reads the manifest; synced: the scrapers match it; ' +
          'failed: see lastSyncError',
      },
    ),
    lastSyncAt: Nullable(Timestamp),
    lastSyncError: Nullable(
      Type.String({ description: 'Every manifest violation with its path, e.g. scrapers[2].limits.timeout' }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ScraperRepoDoc' },
);

const ScraperDoc = Type.Object(
  {
    id: Type.Integer(),
    repo: Type.Integer(),
    name: Type.String(),
    slug: Type.String(),
    runtime: Type.Union([Type.Literal('python'), Type.Literal('node')]),
    entrypoint: Type.String(),
    outputFile: Type.String(),
    schedule: Nullable(Type.String({ description: 'Five-field cron, UTC' })),
    enabled: Type.Boolean(),
    envVars: Type.Record(Type.String(), Type.String()),
    timeoutSecs: Type.Integer(),
    memoryMb: Type.Integer(),
    targetDataset: Nullable(Type.Integer()),
    autoImport: Type.Boolean(),
    reviewDuplicates: ReviewDuplicatesSchema,
    webhookEnabled: Type.Boolean(),
    statistics: Type.Object({
      totalRuns: Type.Integer(),
      successRuns: Type.Integer(),
      failedRuns: Type.Integer(),
      lastRunAt: Nullable(Timestamp),
      lastRunStatus: Nullable(RunStatus),
      lastRunDurationMs: Nullable(Type.Number()),
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ScraperDoc' },
);

const ScraperRunDoc = Type.Object(
  {
    id: Type.Integer(),
    runId: Type.String({ description: "The runner's run_id (UUID)" }),
    scraper: Type.Integer(),
    repo: Type.Integer(),
    status: RunStatus,
    triggeredBy: Type.Union([Type.Literal('schedule'), Type.Literal('manual'), Type.Literal('webhook')]),
    triggeredByUser: Nullable(Type.Integer()),
    scheduledFor: Nullable(Timestamp),
    queuedAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    durationMs: Nullable(Type.Number()),
    exitCode: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    errorCode: Nullable(Type.String({ description: 'e.g. CANCELLED, STUCK, INVALID_OUTPUT, IMPORT_FAILED' })),
    outputRows: Nullable(Type.Integer()),
    outputBytes: Nullable(Type.Integer()),
    ingestFile: Nullable(Type.Integer()),
    importError: Nullable(Type.String()),
    import: ImportOutcomeDoc,
    stdout: Type.Optional(Nullable(Type.String({ description: 'On a single run only' }))),
    stderr: Type.Optional(Nullable(Type.String({ description: 'On a single run only' }))),
    resultFile: Type.Optional(
      Nullable(Type.String({ description: 'The CSV, base64, when it was not imported; single run only' })),
    ),
  },
  { $id: 'ScraperRunDoc' },
);

export const scraperCollectionSchemas = [ScraperRepoDoc, ScraperDoc, ScraperRunDoc];

const Code = Type.Record(Type.String(), Type.String(), {
  maxProperties: CODE_LIMITS.maxFiles,
  propertyNames: { maxLength: CODE_LIMITS.maxFileNameLength },
  description:
    `File name -> content; scrapers.yml at the root. No "..", no leading "/", no empty names; at most ` +
    `${CODE_LIMITS.maxFiles} files and ${CODE_LIMITS.maxTotalBytes} bytes in all.`,
});
const repoFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slug: Type.String({ minLength: 1, maxLength: 128, description: 'Lowercase letters, digits and hyphens' }),
  sourceType: Type.Union([Type.Literal('git'), Type.Literal('upload')]),
  gitUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'https:// only, without credentials' })),
  gitBranch: Type.Optional(Type.String({ maxLength: 200, description: 'Default main' })),
  code: Type.Optional(Code),
  catalog: Type.Optional(NullableId),
};
const RepoCreate = Type.Object(repoFields, strict);
const RepoUpdate = Type.Partial(Type.Object(repoFields), strict);

const ScraperUpdate = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    envVars: Type.Optional(
      Type.Record(
        Type.String({ pattern: ENV_VARS.namePattern }),
        Type.String({ maxLength: ENV_VARS.maxValueLength }),
        {
          maxProperties: ENV_VARS.maxCount,
          additionalProperties: false,
          description: 'Environment of the scraper container; names like SHELL_NAMES',
        },
      ),
    ),
    targetDataset: Type.Optional(NullableId),
    autoImport: Type.Optional(Type.Boolean()),
    reviewDuplicates: Type.Optional(ReviewDuplicatesSchema),
    webhookEnabled: Type.Optional(
      Type.Boolean({ description: 'Turning it on answers a new token once, in webhookToken' }),
    ),
    rotateWebhookToken: Type.Optional(
      Type.Boolean({ description: 'A new token for an enabled webhook; the old one stops working' }),
    ),
  },
  strict,
);

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
const NoQuery = Type.Object({}, strict);
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
          querystring: Type.Object(
            { depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })) },
            strict,
          ),
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
          200: Type.Object({
            doc: Type.Ref('ScraperRepoDoc'),
            message: Type.String(),
            syncQueued: Type.Boolean(),
          }),
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
          200: Type.Object({
            doc: Type.Ref('ScraperDoc'),
            message: Type.String(),
            webhookToken: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
          }),
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
          200: Type.Object({
            doc: Type.Ref('ScraperRunDoc'),
            message: Type.String(),
            cancelled: Type.Boolean(),
          }),
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
