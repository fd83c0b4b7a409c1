import zlib from 'node:zlib';
import compress from '@fastify/compress';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

// What makes the public read API usable from the rest of the web, decided by URL prefix so that every
// public route gets it without doing anything (the read API, its exports, vector tiles, OGC API -
// Features): CORS and response compression. HTTP caching (ETag, Cache-Control) is http-caching.ts.
// docs/api-v1.md, "CORS, compression and caching", describes the rules.

/**
 * Paths any web page may read cross-origin: they answer the same to everyone who shows the same
 * credentials, and browsers never attach ambient credentials (cookies) to them cross-origin, since
 * the answers carry no Access-Control-Allow-Credentials. Every other path (the internal `/api/*`,
 * the account pages) gets no CORS header at all, so a foreign page cannot read them.
 */
function isPublicReadPath(url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return (
    path.startsWith('/api/v1/') || path === '/ogc' || path.startsWith('/ogc/') || path === '/api/openapi.json'
  );
}

/** Headers a cross-origin script may read besides the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'ETag',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Content-Disposition',
  'Accept-Ranges',
  'Content-Range',
];

/** Request headers a cross-origin script may send (a bearer token, revalidation, cache bypass, a byte range). */
const ALLOWED_HEADERS = ['Authorization', 'If-None-Match', 'Cache-Control', 'Accept', 'Range', 'If-Range'];

/**
 * Content types compressed: @fastify/compress's default (text, JSON and `+json` such as
 * application/geo+json, XML) plus JSON text sequences (application/geo+json-seq) and Mapbox vector
 * tiles, which are protobuf and compress to about a third.
 */
const COMPRESSIBLE =
  /^text\/(?!event-stream)|(?:\+|\/)json(?:-seq)?(?:;|$)|(?:\+|\/)xml(?:;|$)|^application\/(?:vnd\.mapbox-vector-tile|x-protobuf)(?:;|$)/u;

/** Whether answers of this content type are compressed (the exports' own gzip step asks too). */
export function isCompressibleType(type: string): boolean {
  return COMPRESSIBLE.test(type);
}

/**
 * Fast settings: gzip level 3 and brotli quality 2 compress a page of 100 events about as well as the
 * defaults (6 and 4) for a fifth of the CPU (0.1 ms against 0.6 ms a page); at the defaults, gzip
 * halved the requests/s of cached pages (docs/performance.md, "HTTP ecosystem").
 */
const GZIP_LEVEL = 3;
const BROTLI_QUALITY = 2;

/**
 * Bodies up to this size are compressed in one synchronous call instead of through a zlib stream
 * on the thread pool. The plugin's default on two cores is 8 KB, so a page of 100 events (~50 KB)
 * took the stream path: a zlib context allocated and a thread-pool hop per answer, which cost more
 * CPU than the compression itself. A whole page of 1000 events (~650 KB) takes about a millisecond
 * at level 3; larger bodies (the exports are streams anyway) keep the stream path.
 */
const SYNC_COMPRESSION_MAX_BYTES = 1024 * 1024;

/** Bodies smaller than this are sent as they are: below about a kilobyte gzip saves too little. */
const COMPRESSION_THRESHOLD_BYTES = 1024;

type PublicWebOptions = {
  /** Origins allowed to read the public paths (CORS_ORIGINS); null: any origin (`*`). */
  corsOrigins: string[] | null;
};

export async function installPublicWeb(app: FastifyInstance, options: PublicWebOptions): Promise<void> {
  const publicOrigin = options.corsOrigins === null ? '*' : options.corsOrigins;
  await app.register(cors, {
    hook: 'onRequest',
    delegator: (request: FastifyRequest, callback) => {
      if (!isPublicReadPath(request.url)) {
        callback(null, { origin: false });
        return;
      }
      callback(null, {
        origin: publicOrigin,
        methods: ['GET', 'HEAD'],
        allowedHeaders: ALLOWED_HEADERS,
        exposedHeaders: EXPOSED_HEADERS,
        credentials: false,
        maxAge: 600,
        // A bare OPTIONS without Origin is answered 204 too, not with the plugin's text/plain 400.
        strictPreflight: false,
      });
    },
  });

  // Only responses are compressed. Request bodies are never inflated: a small gzip body could
  // expand past every body limit checked on the wire (uploads, JSON), and no client needs it.
  app.addHook('onRoute', (route) => {
    route.decompress ??= false;
  });
  await app.register(compress, {
    global: true,
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    customTypes: COMPRESSIBLE,
    zlibOptions: { level: GZIP_LEVEL },
    syncThreshold: SYNC_COMPRESSION_MAX_BYTES,
    brotliOptions: {
      params: {
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      },
    },
  });
}
