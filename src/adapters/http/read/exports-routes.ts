import { PassThrough } from 'node:stream';
import { viewerOf } from '../viewer.ts';
import send from '@fastify/send';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import {
  type DownloadFormat,
  EXPORT_DEFAULT_SORT,
  exportEvents,
} from '../../../application/read/export-events.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import { DomainError } from '../../../domain/errors.ts';
import type { EventExport, EventExporter } from '../../../ports/read/event-exporter.ts';
import type {
  ExportEncoder,
  ExportFile,
  ExportFileStore,
  ExportFileWriter,
} from '../../../ports/read/export-files.ts';
import { setVersionTag } from '../http-caching.ts';
import { errorResponses } from '../error-body.ts';
import { filterParameters } from './events-schemas.ts';
import {
  CsvExport,
  FlatGeobufExport,
  GeoJsonExport,
  GeoJsonSequenceExport,
  GeoPackageExport,
  GeoParquetExport,
  KmlExport,
  PmtilesExport,
} from './exports-schemas.ts';
import type { TileReader } from '../../../ports/read/tile-reader.ts';
import type { BackgroundExports } from '../../../application/read/background-exports.ts';
import { ExportJobStatus, exportJobBody, exportStatusUrl } from './export-jobs-routes.ts';
import { sendGzipped, sendGzippedFile, sendKeptGzip, takesGzipStep } from './export-compression.ts';

// GET /api/v1/events.geojson and /api/v1/events.csv: the whole filtered set, streamed
// (docs/api-v1.md, "Exports"). The first batch is read before the answer starts, so a bad parameter
// or a failing statement is still an ordinary error answer; after that the batches are written as
// the client takes them (backpressure: the next statement starts when the socket has drained), and
// compressed on the way when the client accepts it (gzip: export-compression.ts, kept as a file
// beside the export; brotli: public-web.ts). A client that goes away ends the
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
  DownloadFormat,
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
  geojsonseq: {
    type: 'application/geo+json-seq',
    file: 'chronomap-events.geojsons',
    body: GeoJsonSequenceExport,
    summary: 'Export the filtered events as GeoJSON text sequences (RFC 8142)',
    description:
      'Every event the filters match as a GeoJSON text sequence (RFC 8142): each Feature, exactly as in the GeoJSON ' +
      'export, after a record separator (0x1E) and followed by a line feed, with no surrounding collection, so a ' +
      'reader can take it a feature at a time (GDAL: GeoJSONSeq). ' +
      EXPORT_LIMIT_TEXT,
  },
  kml: {
    type: 'application/vnd.google-earth.kml+xml',
    file: 'chronomap-events.kml',
    body: KmlExport,
    summary: 'Export the filtered events as KML',
    description:
      'Every event the filters match as a KML 2.2 Placemark: the title as its name, eventTimestamp as a TimeStamp, ' +
      'the dataset, the catalog, `provenance` (JSON) and each top-level key of `data` as ExtendedData (objects and arrays as their ' +
      'JSON), the location as a Point (none without one). Characters XML does not allow are removed. ' +
      EXPORT_LIMIT_TEXT,
  },
  gpkg: {
    type: 'application/geopackage+sqlite3',
    file: 'chronomap-events.gpkg',
    body: GeoPackageExport,
    summary: 'Export the filtered events as a GeoPackage',
    description:
      'Every event the filters match as an OGC GeoPackage 1.3 (SQLite): one feature table `events` with the event ' +
      'id as its fid, a POINT in EPSG:4326 (null without a location), `title`, `event_timestamp`, `dataset`, `catalog` ' +
      '`data` and `provenance` (JSON text). Always answered from a kept file (written first when the view has none at this data ' +
      'version), with Content-Length and byte ranges. ' +
      EXPORT_LIMIT_TEXT,
  },
  fgb: {
    type: 'application/flatgeobuf',
    file: 'chronomap-events.fgb',
    body: FlatGeobufExport,
    summary: 'Export the filtered events as FlatGeobuf',
    description:
      'Every event the filters match as a FlatGeobuf file with a packed Hilbert R-tree spatial index (GDAL and QGIS ' +
      'read a bounding box of it, also by range through /vsicurl/): Point features in EPSG:4326 with `id`, `title`, ' +
      '`eventTimestamp` (DateTime), `dataset`, `catalog`, `data` and `provenance` (Json); an export of one dataset adds a typed column ' +
      'per typed property. Events without a location come last, in no bounding box. Always answered from a kept file. ' +
      EXPORT_LIMIT_TEXT,
  },
  parquet: {
    type: 'application/vnd.apache.parquet',
    file: 'chronomap-events.parquet',
    body: GeoParquetExport,
    summary: 'Export the filtered events as GeoParquet',
    description:
      'Every event the filters match as a GeoParquet 1.1 file: columns `id`, `title`, `eventTimestamp` (timestamp, ' +
      'UTC), `dataset`, `catalog`, `data` and `provenance` (JSON), a typed column per typed property in an export of one dataset, and ' +
      '`geometry` (WKB Point, null without a location) named by the `geo` metadata (bbox, OGC:CRS84). Row groups of ' +
      '50,000 events, Snappy-compressed. Always answered from a kept file. ' +
      EXPORT_LIMIT_TEXT,
  },
  pmtiles: {
    type: 'application/vnd.pmtiles',
    file: 'chronomap-events.pmtiles',
    body: PmtilesExport,
    summary: 'Export the filtered events as a PMTiles archive of vector tiles',
    description:
      'The vector tiles of the view (exactly what /api/v1/tiles/{z}/{x}/{y}.mvt gives for the same filters, gzipped) ' +
      'for zooms 0 to 12, every tile that holds an event, in one PMTiles v3 archive that a map client (the pmtiles ' +
      'library, MapLibre) reads by range; past zoom 12 it over-zooms. A `bbox` narrows which tiles are kept (those ' +
      'touching it). An archive holds at most 20,000 tiles (EXPORT_PMTILES_MAX_TILES): a view that needs more is ' +
      'refused with 400 TILE_ARCHIVE_TOO_LARGE before the deep zooms are drawn; a view without a located event ' +
      'gives an archive of its empty zoom-0 tile. `sort` is accepted and ignored. Always answered from a kept file. ' +
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

/**
 * Writes the export into `body` as fast as the client takes it, and into `keep` (the file it is kept
 * as) on the way; stops when `body` is gone. The file is committed only when the whole export was
 * written, so a client that leaves early or a failed statement leaves no file.
 */
async function pump(
  body: PassThrough,
  first: IteratorResult<string>,
  rest: AsyncIterator<string>,
  text: EventExport,
  keep: ExportFileWriter | null,
): Promise<void> {
  // A file that cannot be written (a full disk) is dropped; the download goes on without it.
  let keeping = keep;
  const keepWrite = async (chunk: string | Buffer) => {
    if (!keeping) return;
    try {
      await keeping.write(chunk);
    } catch {
      const dropped = keeping;
      keeping = null;
      await dropped.abort().catch(() => {});
    }
  };
  const write = async (text: string) => {
    // Encoded once for both the file and the answer (each would encode the string itself).
    const chunk = Buffer.from(text, 'utf8');
    const kept = keepWrite(chunk);
    if (!body.write(chunk))
      await new Promise<void>((resolve) => {
        const done = () => {
          body.off('drain', done);
          body.off('close', done);
          resolve();
        };
        body.once('drain', done);
        body.once('close', done);
      });
    await kept;
  };
  let whole = false;
  try {
    await keepWrite(text.head);
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
    await keepWrite(text.tail);
    whole = true;
    body.end(text.tail);
  } catch (error) {
    // A statement failed mid-way (its budget, or the client left): the answer cannot become an error
    // status any more; it ends abnormally, so the client sees a broken transfer, not a short file.
    body.destroy(error as Error);
  } finally {
    await rest.return?.();
    // A file that cannot be kept costs the next download a fresh export, nothing more.
    const kept = keeping;
    if (kept && whole) await kept.commit().catch(() => kept.abort().catch(() => {}));
    else await kept?.abort().catch(() => {});
  }
}

/**
 * A materialised export, read by @fastify/send: Content-Length, `Accept-Ranges: bytes`, one range
 * per request (206; several ranges get the whole file; 416 past its end), HEAD. The validator is the
 * data version's (the caching hook answers If-None-Match on the 200s).
 */
async function sendFile(request: FastifyRequest, reply: FastifyReply, file: ExportFile) {
  const sent = await send(request.raw, file.path, {
    acceptRanges: true,
    etag: false,
    lastModified: false,
    cacheControl: false,
    contentType: false,
    dotfiles: 'allow',
  });
  if (sent.statusCode === 416) {
    sent.stream.destroy();
    return reply
      .code(416)
      .removeHeader('content-disposition')
      .type('application/json; charset=utf-8')
      .header('content-range', sent.headers['Content-Range'])
      .send({ error: 'Range Not Satisfiable', message: `The export is ${file.bytes} bytes long` });
  }
  if (sent.statusCode !== 200 && sent.statusCode !== 206) {
    // The file went between the lookup and here (evicted): the next request exports afresh.
    sent.stream.destroy();
    throw new DomainError('unavailable', 'The export changed while it was read; retry', {
      code: 'EXPORT_GONE',
    });
  }
  return reply.code(sent.statusCode).headers(sent.headers).send(sent.stream);
}

/** The formats answered only once the whole file is written: a large first one may be a job (202). */
const KEPT_FILE_FORMATS: readonly DownloadFormat[] = ['gpkg', 'fgb', 'parquet', 'pmtiles'];

export const v1ExportRoutes: FastifyPluginAsync<{
  exporter: EventExporter;
  files?: ExportFileStore;
  encoder?: ExportEncoder;
  tiles?: TileReader;
  maxArchiveTiles?: number;
  background?: BackgroundExports;
}> = async (app, deps) => {
  for (const format of Object.keys(FORMATS) as DownloadFormat[]) {
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
              description:
                `The events (${summary.replace('Export the filtered events as ', '')}). A \`Range: bytes=a-b\` ` +
                'request is answered 206 with those bytes of the kept file (416 past its end).',
              content: { [type.split(';')[0] ?? type]: { schema: documentedBody } },
            },
            ...(KEPT_FILE_FORMATS.includes(format)
              ? {
                  202: {
                    description:
                      'A large first export of a kept-file format (GeoPackage, FlatGeobuf, GeoParquet, PMTiles: over ' +
                      'EXPORT_SYNC_MAX_EVENTS events) runs in the background: follow `Location` (GET /api/v1/exports/{id}), ' +
                      'which answers 303 to this URL when the file is written.',
                    content: { 'application/json': { schema: ExportJobStatus } },
                  },
                }
              : {}),
            ...errorResponses(400, 416, 429, 500, 503),
          },
        },
      },
      async (request, reply) => {
        const answer = await exportEvents(deps, viewerOf(request), request.query as RawQuery, format, {
          // A range or HEAD needs the size: the file is written whole first.
          whole: request.method === 'HEAD' || request.headers.range !== undefined,
        });
        setVersionTag(reply, answer.version);
        reply.type(type).header('content-disposition', `attachment; filename="${file}"`);
        // A gzip download is deflated once per data version (export-compression.ts).
        const gzipStore = takesGzipStep(request, type, deps.files) ? deps.files : undefined;
        if (answer.kind === 'file') {
          if (!gzipStore) return sendFile(request, reply, answer.file);
          const kept = await sendKeptGzip(request, reply, gzipStore, answer.version);
          return kept ?? sendGzippedFile(request, reply, gzipStore, answer.version, answer.file.path);
        }
        if (answer.kind === 'job') {
          reply.removeHeader('etag').removeHeader('content-disposition');
          return reply
            .code(202)
            .type('application/json; charset=utf-8')
            .header('cache-control', 'no-store')
            .header('location', exportStatusUrl(answer.job.id))
            .send(exportJobBody(answer.job));
        }
        const { text, keep } = answer;
        const iterator = text.batches[Symbol.asyncIterator]();
        const first = await iterator.next().catch(async (error: unknown) => {
          await keep?.abort();
          throw error;
        });
        const body = new PassThrough();
        body.write(text.head);
        // Started here, inside the request's query scope: its statements are cancelled with it.
        void pump(body, first, iterator, text, keep);
        reply.header('accept-ranges', 'bytes');
        return gzipStore ? sendGzipped(reply, gzipStore, answer.version, body) : reply.send(body);
      },
    );
  }
};
