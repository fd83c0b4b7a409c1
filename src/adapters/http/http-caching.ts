import { viewerCacheIdentity } from '../../domain/access.ts';
import { createHash } from 'node:crypto';
import { negotiate } from '@fastify/accept-negotiator';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { viewerOf } from './viewer.ts';

// HTTP caching of the public read paths (/api/v1, /ogc), by URL prefix so that every route there
// gets it without doing anything (docs/api-v1.md, "HTTP caching"):
// - a strong ETag on every 200: the one the route set (/events: from the answer cache's data
//   signature, so a hit costs no extra query), else a hash of the body;
// - `If-None-Match` with that tag: 304 without a body;
// - `Cache-Control: public, max-age=0, must-revalidate` for an anonymous caller and `private, ...`
//   for a signed-in one (who may see private catalogs), with `Vary: Authorization, Cookie` on both,
//   since the same URL answers differently to different callers.
// A strong tag names one exact byte sequence, so the content coding the compression plugin
// (public-web.ts) will choose for this request is part of it (`"<tag>-gzip"`, `"<tag>-br"`).

const PUBLIC_CACHE_CONTROL = 'public, max-age=0, must-revalidate';
const PRIVATE_CACHE_CONTROL = 'private, max-age=0, must-revalidate';

function isCachedPath(url: string): boolean {
  const path = url.split('?', 1)[0] ?? '';
  return path.startsWith('/api/v1/') || path === '/ogc' || path.startsWith('/ogc/');
}

/** The tag of an answer read at a data signature (`scope version:data versions`), for one URL and caller. */
function versionTag(request: FastifyRequest, signature: string): string {
  const viewer = viewerOf(request);
  return digest(`${request.url}\n${viewerCacheIdentity(viewer)}\n${signature}`);
}

/** Sets the tag a route derived itself (the hook then leaves the body unhashed). */
export function setVersionTag(reply: FastifyReply, signature: string): void {
  reply.header('etag', `"${versionTag(reply.request, signature)}"`);
}

function digest(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 27);
}

/** As @fastify/compress negotiates it (`*` and x-gzip count as gzip), so the tag names what is sent. */
export function contentCoding(request: FastifyRequest): 'br' | 'gzip' | null {
  const header = request.headers['accept-encoding'];
  if (typeof header !== 'string') return null;
  const chosen = negotiate(header.toLowerCase().replace(/\*|x-gzip/gu, 'gzip'), ['br', 'gzip']);
  return chosen === 'br' || chosen === 'gzip' ? chosen : null;
}

function withCoding(tag: string, request: FastifyRequest): string {
  const coding = contentCoding(request);
  return coding === null ? `"${tag}"` : `"${tag}-${coding}"`;
}

/** `If-None-Match` holds `tag` (weak comparison, as RFC 9110 asks for this header) or `*`. */
function noneMatchHolds(header: string | undefined, tag: string): boolean {
  if (typeof header !== 'string') return false;
  return header.split(',').some((candidate) => {
    const trimmed = candidate.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === tag;
  });
}

/** Adds `names` to the answer's Vary header, each once. */
export function addVary(reply: FastifyReply, names: string[]): void {
  const current = reply.getHeader('vary');
  const present = String(current ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  const missing = names.filter((name) => !present.includes(name.toLowerCase()));
  if (missing.length === 0) return;
  reply.header('vary', [current, ...missing].filter(Boolean).join(', '));
}

export function installHttpCaching(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return payload;
    if (!isCachedPath(request.url)) return payload;
    // accept-encoding in lower case, as @fastify/compress spells (and looks for) it: one entry, not two.
    addVary(reply, ['Authorization', 'Cookie', 'accept-encoding']);
    // 204 (an empty vector tile) is cached as a 200 is: it gets validators too.
    if (reply.statusCode !== 200 && reply.statusCode !== 204) return payload;
    if (!reply.hasHeader('cache-control'))
      reply.header('cache-control', viewerOf(request) ? PRIVATE_CACHE_CONTROL : PUBLIC_CACHE_CONTROL);
    const routeTag = reply.getHeader('etag');
    let tag: string;
    if (typeof routeTag === 'string') tag = routeTag.replace(/^"|"$/g, '');
    else if (typeof payload === 'string' || Buffer.isBuffer(payload)) tag = digest(payload);
    else if (payload === undefined || payload === null) tag = digest('');
    else return payload; // a stream: its hash is known only at its end
    const etag = withCoding(tag, request);
    reply.header('etag', etag);
    if (!noneMatchHolds(request.headers['if-none-match'], etag)) return payload;
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    return null;
  });
}
