import { PassThrough } from 'node:stream';
import { viewerOf } from '../viewer.ts';
import type { FastifyPluginAsync } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { EXPORT_DEFAULT_SORT, exportEvents } from '../../../application/read/export-events.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import type { EventExport, EventExporter, ExportFormat } from '../../../ports/read/event-exporter.ts';
import { errorResponses } from '../error-body.ts';
import { filterParameters } from './events-schemas.ts';
import { CsvExport, GeoJsonExport } from './exports-schemas.ts';

// GET /api/v1/events.geojson and /api/v1/events.csv: the whole filtered set, streamed
// (docs/api-v1.md, "Exports"). The first batch is read before the answer starts, so a bad parameter
// or a failing statement is still an ordinary error answer; after that the batches are written as
// the client takes them (backpressure: the next statement starts when the socket has drained), and
// compressed on the way when the client accepts it (public-web.ts). A client that goes away ends the
// export: the running statement is cancelled (client-gone.ts) and no other starts. An export takes a
// place of the `exports` class for as long as it streams (http/concurrency-limit.ts), and has no
// request budget: each batch is a statement with its own, and a download may take as long as the
// client does.

const EXPORT_LIMIT_TEXT =
  'The export holds the events as they were when it started (one snapshot of the database: events written, ' +
  'changed or deleted while it streams are as they were); if it fails after the answer started, the transfer is ' +
  'broken off (never a complete-looking short file). ' +
  'Each client (an account, or an address when anonymous) runs at most 2 exports at the same time per API process ' +
  '(config/quotas.yaml, concurrentRequests.exports); one more is refused with 429 TOO_MANY_EXPORTS (Retry-After 5 s) ' +
  'until one ends, and with 429 ANONYMOUS_SHARE_FULL when anonymous callers together run 4. ' +
  'When the process runs as many exports as it holds snapshots for, one more is a 503 EXPORTS_BUSY (Retry-After 5 s).';

const FORMATS: Record<
  ExportFormat,
  { type: string; file: string; summary: string; description: string; body: TSchema }
> = {
  geojson: {
    type: 'application/geo+json',
    file: 'chronomap-events.geojson',
    body: GeoJsonExport,
    summary: 'Export the filtered events as GeoJSON',
    description:
      'A FeatureCollection of every event the filters match (no page cap), streamed. Each event is a Feature with ' +
      'the event id as its top-level `id`, a Point geometry or null, and properties `title`, `eventTimestamp`, `dataset` ' +
      '(slug), `catalog` (slug) and `data` (as stored). `sort`: id, eventTimestamp, dataset or isValid, - for ' +
      'descending; default id (the fastest: the table\u2019s own order). ' +
      EXPORT_LIMIT_TEXT,
  },
  csv: {
    type: 'text/csv; charset=utf-8; header=present',
    file: 'chronomap-events.csv',
    body: CsvExport,
    summary: 'Export the filtered events as CSV',
    description:
      'RFC 4180 CSV (UTF-8, CRLF, a header line) of every event the filters match, streamed: id, title, eventTimestamp, ' +
      'dataset, catalog, longitude, latitude, then one column per key of the events\u2019 `data` (sorted; `data.<key>` ' +
      'when a key is one of the fixed names). Objects and arrays are written as JSON; text that starts with =, +, -, @, ' +
      'tab or CR gets a leading apostrophe so that spreadsheets do not run it as a formula. ' +
      EXPORT_LIMIT_TEXT,
  },
};

/** Writes the export into `body` as fast as the client takes it; stops when `body` is gone. */
async function pump(
  body: PassThrough,
  first: IteratorResult<string>,
  rest: AsyncIterator<string>,
  text: EventExport,
): Promise<void> {
  const write = async (chunk: string) => {
    if (body.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        body.off('drain', done);
        body.off('close', done);
        resolve();
      };
      body.once('drain', done);
      body.once('close', done);
    });
  };
  try {
    let next = first;
    let started = false;
    while (!next.done) {
      if (body.destroyed) return;
      if (started) await write(text.separator);
      await write(next.value);
      started = true;
      if (body.destroyed) return;
      next = await rest.next();
    }
    body.end(text.tail);
  } catch (error) {
    // A statement failed mid-way (its budget, or the client left): the answer cannot become an error
    // status any more; it ends abnormally, so the client sees a broken transfer, not a short file.
    body.destroy(error as Error);
  } finally {
    await rest.return?.();
  }
}

export const v1ExportRoutes: FastifyPluginAsync<{ exporter: EventExporter }> = async (app, deps) => {
  for (const format of ['geojson', 'csv'] as const) {
    const { type, file, summary, description, body: documentedBody } = FORMATS[format];
    app.get(
      `/api/v1/events.${format}`,
      {
        config: { costly: 'exports', timeBudget: false },
        schema: {
          tags: ['events'],
          summary,
          description,
          querystring: Type.Object(
            { ...filterParameters, sort: Type.Optional(Type.String({ default: EXPORT_DEFAULT_SORT })) },
            { additionalProperties: false },
          ),
          produces: [type.split(';')[0] ?? type],
          response: {
            200: {
              description: `The events as ${format === 'csv' ? 'CSV' : 'GeoJSON'}`,
              content: { [type.split(';')[0] ?? type]: { schema: documentedBody } },
            },
            ...errorResponses(400, 429, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const text = await exportEvents(deps, viewerOf(request), request.query as RawQuery, format);
        const iterator = text.batches[Symbol.asyncIterator]();
        const first = await iterator.next();
        const body = new PassThrough();
        body.write(text.head);
        // Started here, inside the request's query scope: its statements are cancelled with it.
        void pump(body, first, iterator, text);
        return reply.type(type).header('content-disposition', `attachment; filename="${file}"`).send(body);
      },
    );
  }
};
