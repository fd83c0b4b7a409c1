import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { type BackgroundExports, exportStatus } from '../../../application/read/background-exports.ts';
import type { ExportJob } from '../../../ports/read/export-jobs.ts';
import { errorResponses } from '../error-body.ts';
import { viewerOf } from '../viewer.ts';

// GET /api/v1/exports/{id}: the progress of a background export (application/read/background-exports.ts),
// for its requester only (anyone else: 404), and when its file is written a 303 to the download URL,
// which then answers the kept file (ETag, ranges). Never cached: the progress changes.

export const ExportJobStatus = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    state: Type.Union([
      Type.Literal('queued'),
      Type.Literal('running'),
      Type.Literal('failed'),
      Type.Literal('done'),
    ]),
    format: Type.String(),
    written: Type.Integer({ description: 'Events written so far (a PMTiles job reports them when done)' }),
    estimated: Type.Integer({ description: 'Events the view held when the export was requested' }),
    reason: Type.Optional(Type.String({ description: 'Why it failed (state failed)' })),
    status: Type.String({ description: 'This status URL' }),
    download: Type.String({ description: 'The download URL: it answers the file once the state is done' }),
  },
  { $id: 'ExportJobStatus', additionalProperties: false },
);

export const exportStatusUrl = (id: string) => `/api/v1/exports/${id}`;

/** The export's own URL, with the query it was requested with. */
function downloadUrl(job: ExportJob): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(job.query)) {
    for (const one of Array.isArray(value) ? value : [value])
      if (typeof one === 'string') query.append(name, one);
  }
  const text = query.toString();
  return `/api/v1/events.${job.format}${text === '' ? '' : `?${text}`}`;
}

export function exportJobBody(job: ExportJob) {
  return {
    id: job.id,
    state: job.state,
    format: job.format,
    written: job.written,
    estimated: job.estimated,
    ...(job.reason !== null && job.state === 'failed' ? { reason: job.reason } : {}),
    status: exportStatusUrl(job.id),
    download: downloadUrl(job),
  };
}

export const exportJobRoutes: FastifyPluginAsync<{ background: BackgroundExports }> = async (app, deps) => {
  app.get(
    '/api/v1/exports/:id',
    {
      schema: {
        tags: ['events'],
        summary: 'Follow a background export',
        description:
          'The progress of a background export (the 202 of GET /api/v1/events.<format>): queued, running (events ' +
          'written of estimated), failed (with its reason) or done, which answers 303 See Other to the download ' +
          'URL (the kept file, with ETag and byte ranges). Only for whoever requested it (the same account; an ' +
          'anonymous request: anonymous callers holding its id); anyone else gets 404. A job whose worker stopped ' +
          '(no heartbeat for 10 s) is sent again, at most 3 times, then failed.',
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: {
          200: {
            description: 'Not done yet, or failed',
            content: { 'application/json': { schema: ExportJobStatus } },
          },
          303: {
            description: 'Done: `Location` is the download URL',
            content: { 'application/json': { schema: ExportJobStatus } },
          },
          ...errorResponses(400, 404, 429, 500),
        },
      },
    },
    async (request, reply) => {
      const job = await exportStatus(
        deps.background,
        viewerOf(request),
        (request.params as { id: string }).id,
      );
      const body = exportJobBody(job);
      reply.header('cache-control', 'no-store');
      if (job.state === 'done') return reply.code(303).header('location', body.download).send(body);
      return body;
    },
  );
};
