import type { FastifyPluginAsync } from 'fastify';
import {
  type DataExportDeps,
  getDataExport,
  openDataExport,
  requestDataExport,
} from '../../../application/accounts/export-own-data.ts';
import { EXPORT_FILES } from '../../../domain/accounts/data-export.ts';
import type { DataExport } from '../../../ports/accounts/data-export-store.ts';
import { errorResponses } from '../error-body.ts';
import { IdParams, NoQuery } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import { DataExportDoc, DataExportRequested, DataExportZip } from './data-export-schemas.ts';

// A user's export of their own data: request it, follow its state, download the ZIP. Only its owner
// sees an export (everyone else, admins too, a 404: it is personal data).

const signedInAndLimited = { rateLimit: true, requiresUser: true } as const;
const tags = ['accounts'];

const exportDoc = (record: DataExport, now: Date) => {
  const expired =
    record.status === 'ready' && (!record.storedPath || Date.parse(record.expiresAt ?? '') <= now.getTime());
  return {
    id: record.id,
    status: record.status,
    sizeBytes: record.sizeBytes,
    error: record.error,
    expiresAt: record.expiresAt,
    expired,
    createdAt: record.createdAt,
    finishedAt: record.finishedAt,
    download: record.status === 'ready' && !expired ? `/api/data-exports/${record.id}/download` : null,
  };
};

export const dataExportRoutes: FastifyPluginAsync<{ exports: DataExportDeps }> = async (app, { exports }) => {
  app.post(
    '/api/data-exports/request',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Request an export of your data',
        description:
          `A ZIP of ${EXPORT_FILES.join(', ')} built in the background; follow it with GET /api/data-exports/{id}. ` +
          'One at a time (409 EXPORT_IN_PROGRESS while one is queued or running), at most 5 a day (429 EXPORT_RATE_LIMITED); ' +
          'downloadable for 24 hours.',
        querystring: NoQuery,
        response: {
          202: DataExportRequested,
          ...errorResponses(401, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const record = await requestDataExport(exports, viewerOf(request));
      return reply
        .status(202)
        .send({ doc: exportDoc(record, exports.clock.now()), message: 'Export queued' });
    },
  );

  app.get(
    '/api/data-exports/:id',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'The state of one of your data exports',
        params: IdParams,
        querystring: NoQuery,
        response: { 200: DataExportDoc, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: number };
      return exportDoc(await getDataExport(exports, viewerOf(request), id), exports.clock.now());
    },
  );

  app.get(
    '/api/data-exports/:id/download',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Download one of your data exports (application/zip)',
        description:
          '409 EXPORT_NOT_READY while it is built, 409 EXPORT_EXPIRED after 24 hours; 404 for anyone but its owner.',
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: DataExportZip,
          ...errorResponses(400, 401, 404, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: number };
      const { record, stream } = await openDataExport(exports, viewerOf(request), id);
      return reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="chronomap-export-${record.id}.zip"`)
        .header('content-length', String(record.sizeBytes ?? ''))
        .send(stream);
    },
  );
};
