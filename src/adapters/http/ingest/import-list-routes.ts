import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import {
  listCatalogsWithDatasets,
  listIngestFiles,
  type ListQuery,
} from '../../../application/ingest/list-imports.ts';
import {
  deleteScheduledIngest,
  listScheduledIngests,
  scheduledIngestRuns,
} from '../../../application/ingest/manage-scheduled-ingests.ts';
import { INGEST_FILE_FIELDS, SCHEDULE_FIELDS } from '../../../domain/ingest/import-list-fields.ts';
import type { ImportListings } from '../../../ports/ingest/import-listings.ts';
import { errorResponses } from '../error-body.ts';
import { PageSchema } from '../schemas.ts';
import { fileDoc } from './ingest-docs.ts';
import { IdParams } from '../schemas.ts';
import type { IngestHttpDeps } from './ingest-file-routes.ts';
import { viewerOf } from '../viewer.ts';
import { ScheduleDoc, scheduleDoc } from './scheduled-ingest-schemas.ts';
import { CatalogWithDatasetsDoc, RunRecordDoc, listQuerySchema } from './import-list-schemas.ts';

// The lists behind "my imports", the scheduled imports page and the import wizard: the ingest-files
// collection, the scheduled imports with their last runs (and delete), and the caller's catalogs
// with their datasets. Each needs a login (401) and shows only what the caller may manage.

type ImportListRouteOptions = { ingest: IngestHttpDeps; listings: ImportListings };

const NoQuery = Type.Object({}, { additionalProperties: false });
const signedInAndLimited = { rateLimit: true, requiresUser: true } as const;

export const importListRoutes: FastifyPluginAsync<ImportListRouteOptions> = async (
  app,
  { ingest, listings },
) => {
  const tags = ['ingestion'];
  app.get(
    '/api/ingest-files',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Your imports (the ingest-files collection)',
        description:
          'The ingest files the caller uploaded or that import into their catalogs (admins: all), newest first, ' +
          'each with its jobs (one per sheet: stage, errors, review reasons). Payload-style where/sort/limit/page; ' +
          '400 for an unknown field or operator.',
        querystring: listQuerySchema(INGEST_FILE_FIELDS),
        response: { 200: PageSchema(Type.Ref('IngestFileDoc')), ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => {
      const { files, ...page } = await listIngestFiles(
        { listings },
        viewerOf(request),
        request.query as ListQuery,
      );
      return { docs: files.map(({ file, jobs }) => fileDoc(file, jobs)), ...page };
    },
  );

  app.get(
    '/api/catalogs/with-datasets',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'The catalogs you may import into, with their datasets',
        description:
          "The import wizard's list: the caller's own catalogs (admins: all), by title, each with its datasets by title. " +
          'At most 500 catalogs and 500 datasets each; `truncated` says when there were more.',
        querystring: NoQuery,
        response: {
          200: Type.Object({ docs: Type.Array(CatalogWithDatasetsDoc), truncated: Type.Boolean() }),
          ...errorResponses(401, 429),
        },
      },
    },
    async (request) => {
      const { catalogs, truncated } = await listCatalogsWithDatasets({ listings }, viewerOf(request));
      return { docs: catalogs, truncated };
    },
  );

  const deps = { ...ingest.schedules, listings };
  for (const base of ['/api/scheduled-ingests', '/api/scheduled-imports']) {
    app.get(
      base,
      {
        config: signedInAndLimited,
        schema: {
          tags,
          summary: 'Your scheduled URL imports',
          description:
            'The schedules the caller created or that import into their catalogs (admins: all). ' +
            'Payload-style where/sort/limit/page.',
          querystring: listQuerySchema(SCHEDULE_FIELDS),
          response: { 200: PageSchema(ScheduleDoc), ...errorResponses(400, 401, 429) },
        },
      },
      async (request) => {
        const { schedules, ...page } = await listScheduledIngests(
          deps,
          viewerOf(request),
          request.query as ListQuery,
        );
        return { docs: schedules.map(scheduleDoc), ...page };
      },
    );

    app.get(
      `${base}/:id/runs`,
      {
        config: signedInAndLimited,
        schema: {
          tags,
          summary: 'The last runs of a scheduled import, with their outcome',
          description:
            'Newest first, at most 20: status (of the fetch), error and the ingest file each run created, and ' +
            "`import`, that file's outcome: completed, needs-review (with its reasons) or failed, rows new, " +
            'updated and unchanged.',
          params: IdParams,
          querystring: NoQuery,
          response: {
            200: Type.Object({ schedule: ScheduleDoc, runs: Type.Array(RunRecordDoc) }),
            ...errorResponses(400, 401, 404, 429),
          },
        },
      },
      async (request) => {
        const { id } = request.params as { id: number };
        const { schedule, runs } = await scheduledIngestRuns(deps, viewerOf(request), id);
        return {
          schedule: scheduleDoc(schedule),
          runs: runs.map((run) => ({
            id: run.id,
            dueAt: run.dueAt,
            triggeredBy: run.triggeredBy,
            status: run.status,
            ingestFile: run.ingestFileId,
            error: run.error,
            createdAt: run.createdAt,
            finishedAt: run.finishedAt,
            import: run.import,
          })),
        };
      },
    );

    app.delete(
      `${base}/:id`,
      {
        config: signedInAndLimited,
        schema: {
          tags,
          summary: 'Delete a scheduled import',
          description:
            'Removes the schedule, its webhook and its run history; the imports its runs made stay. ' +
            'An active schedule gives its activeSchedules unit back.',
          params: IdParams,
          querystring: NoQuery,
          response: {
            200: Type.Object({ doc: ScheduleDoc, message: Type.String() }),
            ...errorResponses(400, 401, 404, 429),
          },
        },
      },
      async (request) => {
        const { id } = request.params as { id: number };
        const schedule = await deleteScheduledIngest(deps, viewerOf(request), id);
        return { doc: scheduleDoc(schedule), message: 'Scheduled import deleted' };
      },
    );
  }
};
