import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { accessibleJob } from '../../../application/ingest/import-access.ts';
import { recommendIngestRecoveries } from '../../../application/ingest/recommend-ingest-recoveries.ts';
import { resetIngestJob } from '../../../application/ingest/reset-ingest-job.ts';
import { retryIngestJob } from '../../../application/ingest/retry-ingest-job.ts';
import { reviseIngestJob } from '../../../application/ingest/revise-ingest-job.ts';
import { ID_STRATEGIES } from '../../../domain/ingest/rows.ts';
import { stageName } from '../../../domain/ingest/stages.ts';
import { errorResponses } from '../error-body.ts';
import { USER_ONLY } from '../require-user.ts';
import type { IngestHttpDeps } from './ingest-file-routes.ts';
import { viewerOf } from '../viewer.ts';
import { jobDoc } from './ingest-docs.ts';
import { IdParams } from '../schemas.ts';
import { Recommendations, ResetResult, RetryRefusal, RetrySuccess } from './ingest-schemas.ts';

// Ingest jobs: read, approve or reconfigure (PATCH), and the recovery endpoints, under the current
// `/api/ingest-jobs` names and the earlier `/api/import-jobs` aliases. Each speaks its own stage
// names (kebab-case, UPPER_CASE). Every one is for the uploader, the target catalog's owner and
// admins: 401 anonymous, 404 (as for a job that does not exist) for anyone else.

const NoQuery = Type.Object({}, { additionalProperties: false });
const Literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

const ConfigPatch = Type.Object(
  {
    fieldMapping: Type.Optional(
      Type.Object(
        Object.fromEntries(
          ['timestamp', 'latitude', 'longitude', 'coordinates', 'address', 'title', 'id'].map((k) => [
            k,
            Type.Optional(
              k === 'address'
                ? Type.Union([
                    Type.String({ minLength: 1, maxLength: 300 }),
                    Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { minItems: 1, maxItems: 8 }),
                  ])
                : Type.String({ minLength: 1 }),
            ),
          ]),
        ),
        { additionalProperties: false },
      ),
    ),
    idStrategy: Type.Optional(Literals(ID_STRATEGIES)),
    duplicateHandling: Type.Optional(Literals(['skip', 'update'])),
    geocoding: Type.Optional(Type.Boolean()),
    schemaMode: Type.Optional(Literals(['strict', 'additive', 'flexible'])),
  },
  { additionalProperties: false },
);

export const ingestJobRoutes: FastifyPluginAsync<{ ingest: IngestHttpDeps }> = async (app, { ingest }) => {
  for (const base of ['/api/ingest-jobs', '/api/import-jobs']) {
    const earlier = base === '/api/import-jobs';
    const naming = earlier ? 'import' : 'ingest';
    const tags = ['ingestion'];

    app.get(
      `${base}/failed/recommendations`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: `One recommendation per failed job${earlier ? ' (earlier alias)' : ''}`,
          description:
            "The caller's failed jobs and jobs waiting for a scheduled retry (as uploader or catalog owner; admins: all).",
          querystring: NoQuery,
          response: { 200: Recommendations, ...errorResponses(400, 401) },
        },
      },
      async (request) => recommendIngestRecoveries(ingest, viewerOf(request), naming),
    );

    app.get(
      `${base}/:id`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: 'An ingest job',
          params: IdParams,
          querystring: NoQuery,
          response: { 200: Type.Ref('IngestJobDoc'), ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { id } = request.params as { id: number };
        return jobDoc(await accessibleJob(ingest, viewerOf(request), id), naming);
      },
    );

    app.patch(
      `${base}/:id`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: 'Approve a job in review (or a schema change) or adjust its settings',
          description:
            '`approved: true` on a job in needs-review continues its workflow (create-schema-version, geocode-batch, ' +
            'create-events); on a job that failed for a breaking schema change it validates again accepting the change. ' +
            'New `config` on a failed or reviewed job restarts it from analyze-duplicates.',
          params: IdParams,
          querystring: NoQuery,
          body: Type.Object(
            { approved: Type.Optional(Type.Boolean()), config: Type.Optional(ConfigPatch) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.Object({ doc: Type.Ref('IngestJobDoc'), message: Type.String() }),
            ...errorResponses(400, 401, 404, 409),
          },
        },
      },
      async (request) => {
        const { id } = request.params as { id: number };
        const body = request.body as { approved?: boolean; config?: Record<string, unknown> };
        const { job, restartedAt } = await reviseIngestJob(ingest, viewerOf(request), id, body, naming);
        return {
          doc: jobDoc(job, naming),
          message: restartedAt
            ? `Updated; the workflow continues at ${stageName(naming, restartedAt)}`
            : 'Updated',
        };
      },
    );

    app.post(
      `${base}/:id/retry`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: 'Retry a failed job at its recovery stage',
          params: IdParams,
          querystring: NoQuery,
          response: {
            200: RetrySuccess,
            400: Type.Union([RetryRefusal('not_retryable', 400), Type.Ref('ErrorBody')]),
            // Or the ErrorBody of a read-only API key (refused before the route runs).
            403: Type.Union([RetryRefusal('quota_exceeded', 403), Type.Ref('ErrorBody')]),
            ...errorResponses(401, 404),
          },
        },
      },
      async (request, reply) => {
        const { id } = request.params as { id: number };
        const result = await retryIngestJob(ingest, viewerOf(request), id, naming);
        return reply.status(result.success ? 200 : result.statusCode).send(result);
      },
    );

    app.post(
      `${base}/:id/reset`,
      {
        config: USER_ONLY,
        schema: {
          tags,
          summary: 'Reset a job to a stage',
          description:
            'Allowed stages: ANALYZE_DUPLICATES, DETECT_SCHEMA, VALIDATE_SCHEMA, GEOCODE_BATCH, in either spelling; the answer ' +
            'spells stages as the route does (kebab-case under /api/ingest-jobs, UPPER_CASE under /api/import-jobs). ' +
            "Clears that stage's and later stages' progress; events already created are not deleted.",
          params: IdParams,
          querystring: NoQuery,
          body: Type.Object({ stage: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
          response: { 200: ResetResult, ...errorResponses(400, 401, 404) },
        },
      },
      async (request) => {
        const { id } = request.params as { id: number };
        const { stage } = request.body as { stage: string };
        return resetIngestJob(ingest, viewerOf(request), id, stage, naming);
      },
    );
  }
};
