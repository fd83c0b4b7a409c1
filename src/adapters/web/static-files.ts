import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

// Files the service serves from memory: the Explore page's script and CSS (web/explore/), the
// account pages' scripts (web/account/), MapLibre from node_modules. Each is read and compressed
// once, answered with its ETag (a 304 to a browser that has it) and never sniffed as another type.

export type StaticFile = { body: Buffer; gzip: Buffer; type: string; etag: string; cacheControl: string };
type LazyFile = () => StaticFile;

export const JAVASCRIPT = 'text/javascript; charset=utf-8';
/** For versioned URLs (MapLibre's carries its version): the browser keeps them for good. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** For our own files, whose URLs stay put across releases: the browser asks again, a 304 if unchanged. */
export const REVALIDATE = 'public, max-age=0, must-revalidate';

export function staticFile(body: Buffer, type: string, cacheControl: string): StaticFile {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, gzip: gzipSync(body), type, etag, cacheControl };
}

/** Read and compressed on first use, then kept: building the app (as every test does) stays cheap. */
export function loadedOnFirstUse(load: () => Buffer, type: string, cacheControl: string): LazyFile {
  let loaded: StaticFile | undefined;
  return () => (loaded ??= staticFile(load(), type, cacheControl));
}

export function sendStaticFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  reply
    .header('Cache-Control', file.cacheControl)
    .header('ETag', file.etag)
    .header('Vary', 'Accept-Encoding')
    .header('X-Content-Type-Options', 'nosniff')
    .type(file.type);
  if (request.headers['if-none-match'] === file.etag) return reply.status(304).send();
  if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
    return reply.header('Content-Encoding', 'gzip').send(file.gzip);
  }
  return reply.send(file.body);
}

/** One GET route per URL, answering its file (hidden from the OpenAPI document). */
export function serveFiles(app: FastifyInstance, files: Map<string, LazyFile>): void {
  for (const [url, file] of files) {
    app.get(url, { schema: { hide: true } }, (request, reply) => sendStaticFile(request, reply, file()));
  }
}

/**
 * The named files of one folder of the project under `urlPrefix` (`{urlPrefix}/{name}`), each
 * revalidated on use. Only the names given are served: nothing else in the folder is reachable.
 */
export function serveFolder(
  app: FastifyInstance,
  folder: string,
  urlPrefix: string,
  types: Record<string, string>,
): void {
  const files = new Map<string, LazyFile>();
  for (const [name, type] of Object.entries(types)) {
    const file = path.join(folder, name);
    files.set(
      `${urlPrefix}/${name}`,
      loadedOnFirstUse(() => readFileSync(file), type, REVALIDATE),
    );
  }
  serveFiles(app, files);
}
