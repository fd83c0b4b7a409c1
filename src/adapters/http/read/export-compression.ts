import { pipeline, Transform, type Readable } from 'node:stream';
import send from '@fastify/send';
import { createGzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../../../domain/errors.ts';
import type { ExportFileStore, ExportFileWriter } from '../../../ports/read/export-files.ts';
import { addVary, contentCoding } from '../http-caching.ts';
import { isCompressibleType } from '../public-web.ts';

// The gzip step of the text exports (GeoJSON, GeoJSON text sequences, CSV, KML). Left to the
// compression plugin (public-web.ts), every gzip download deflated the whole export again, kept file
// or not, and deflate was most of its time: 1.8 s of a kept CSV's 2.2 s at 300,000 events, so gzip
// exports ran at 0.4 of `psql \copy` (docs/performance.md, "Exports and compression"). Here a gzip
// download is deflated once per data version: the compressed bytes go to the client and, on the
// way, into a companion file of the kept export (the same store, the export's key plus "gzip", so it
// is scoped to the viewer exactly as the export is, evicted by the same byte cap and dropped by the
// same `clear`). Later gzip downloads of the same version are a file read with Content-Encoding:
// gzip and a Content-Length. Brotli clients, ranges and HEAD keep the plugin's path and the
// identity file (a range names bytes of the identity representation).

/**
 * Level 1: measured on the kept exports of 300,000 events (2026-11-28, load 2.9-3.3), level 1
 * deflates GeoJSON at 207 MB/s (ratio 7.06) and CSV at 97 MB/s (3.43) against level 3's 187 and 67
 * MB/s (7.30, 3.55) and level 6's 88 and 39 (7.79, 3.82). The first download waits on it; the
 * companion file costs 3-4 % more bytes. docs/decisions.md, "Gzip exports".
 */
const EXPORT_GZIP_LEVEL = 1;

/** The store key of the gzip companion of the export kept under `key`. */
function gzipKey(key: string): string {
  return `${key}\ngzip`;
}

/**
 * Whether this request takes the gzip step: a whole GET of a text format (`type`: the file formats
 * are binary, and Parquet and PMTiles compressed already) whose negotiated coding is gzip, with a
 * store to keep it in.
 */
export function takesGzipStep(
  request: FastifyRequest,
  type: string,
  files: ExportFileStore | undefined,
): boolean {
  return (
    files !== undefined &&
    isCompressibleType(type) &&
    request.method === 'GET' &&
    request.headers.range === undefined &&
    contentCoding(request) === 'gzip'
  );
}

/** A kept file read whole by @fastify/send (which stats and opens it); null when it is gone. */
async function readKept(
  request: FastifyRequest,
  path: string,
): Promise<{ stream: Readable; bytes: number } | null> {
  const sent = await send(request.raw, path, {
    acceptRanges: false,
    etag: false,
    lastModified: false,
    cacheControl: false,
    contentType: false,
    dotfiles: 'allow',
  });
  if (sent.statusCode === 200) return { stream: sent.stream, bytes: Number(sent.headers['Content-Length']) };
  sent.stream.destroy();
  return null;
}

/** The gzip companion of the export kept under `key` as the answer, or null when there is none (yet). */
export async function sendKeptGzip(
  request: FastifyRequest,
  reply: FastifyReply,
  files: ExportFileStore,
  key: string,
): Promise<FastifyReply | null> {
  const found = await files.find(gzipKey(key));
  // Evicted between the lookup and the read: a fresh deflate, not a broken answer.
  const kept = found && (await readKept(request, found.path));
  if (!kept) return null;
  addVary(reply, ['accept-encoding']);
  return reply.header('content-encoding', 'gzip').header('content-length', kept.bytes).send(kept.stream);
}

/** A kept export's identity file, deflated to the client and into its companion. */
export async function sendGzippedFile(
  request: FastifyRequest,
  reply: FastifyReply,
  files: ExportFileStore,
  key: string,
  path: string,
): Promise<FastifyReply> {
  const kept = await readKept(request, path);
  if (!kept)
    throw new DomainError('unavailable', 'The export changed while it was read; retry', {
      code: 'EXPORT_GONE',
    });
  return sendGzipped(reply, files, key, kept.stream);
}

/**
 * `source` (an export as it streams, or its kept file) deflated to the client and into the gzip
 * companion of `key`, which is committed only when `source` ended whole: an export that failed or
 * a client that left keeps nothing.
 */
export async function sendGzipped(
  reply: FastifyReply,
  files: ExportFileStore,
  key: string,
  source: Readable,
): Promise<FastifyReply> {
  // A companion that cannot be written (a full disk) costs the next gzip download a deflate, nothing more.
  let keeping: ExportFileWriter | null = await files.create(gzipKey(key)).catch(() => null);
  const drop = () => {
    const dropped = keeping;
    keeping = null;
    return dropped?.abort().catch(() => {});
  };
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!keeping) return done(null, chunk);
      keeping.write(chunk).then(
        () => done(null, chunk),
        async () => {
          await drop();
          done(null, chunk);
        },
      );
    },
  });
  // Deflate runs on libuv's thread pool, beside the main thread serialising the next batch.
  pipeline(source, createGzip({ level: EXPORT_GZIP_LEVEL }), tee, (error) => {
    const kept = keeping;
    keeping = null;
    if (error || !kept) void kept?.abort().catch(() => {});
    else void kept.commit().catch(() => kept.abort().catch(() => {}));
  });
  addVary(reply, ['accept-encoding']);
  // Content-Encoding set: the compression plugin passes the answer through as it is.
  return reply.header('content-encoding', 'gzip').send(tee);
}
