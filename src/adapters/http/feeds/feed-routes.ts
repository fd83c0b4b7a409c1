import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { readViewCalendar, readViewFeed, type ViewFeedDeps } from '../../../application/feeds/view-feeds.ts';
import { atomFeed } from '../../../domain/feeds/atom.ts';
import type { FeedHead, FeedLinks } from '../../../domain/feeds/feed-entries.ts';
import { icalendar } from '../../../domain/feeds/icalendar.ts';
import { jsonFeed } from '../../../domain/feeds/json-feed.ts';
import { publicOrigin } from '../public-url.ts';
import { viewerOf } from '../viewer.ts';

// The feeds of a saved view (issue 39 §2), beside its short link: `/v/{code}/feed.atom` (Atom,
// RFC 4287, paged by RFC 5005 `next` links), `/v/{code}/feed.json` (JSON Feed 1.1, `next_url`) and
// `/v/{code}/events.ics` (iCalendar, RFC 5545). They open as the view does; a private view's feeds
// take an API key (`Authorization: Bearer cmk_…`), which feed readers and calendars can send.

const CodeParams = {
  type: 'object',
  properties: { code: { type: 'string', maxLength: 64 } },
  required: ['code'],
  additionalProperties: false,
} as const;

const FeedQuery = {
  type: 'object',
  properties: { cursor: { type: 'string', maxLength: 256 }, limit: { type: 'string', maxLength: 8 } },
  additionalProperties: false,
} as const;

type FeedRequest = FastifyRequest<{
  Params: { code: string };
  Querystring: { cursor?: string; limit?: string };
}>;

function pageLinks(request: FeedRequest, file: string, nextCursor: string | null): FeedLinks {
  const base = `${publicOrigin(request)}/v/${request.params.code}/${file}`;
  const limit = request.query.limit ? `limit=${encodeURIComponent(request.query.limit)}` : '';
  const withQuery = (parts: string[]) => {
    const query = parts.filter(Boolean).join('&');
    return query ? `${base}?${query}` : base;
  };
  const cursor = (value: string | undefined) => (value ? `cursor=${encodeURIComponent(value)}` : '');
  return {
    self: withQuery([cursor(request.query.cursor), limit]),
    first: withQuery([limit]),
    next: nextCursor ? withQuery([cursor(nextCursor), limit]) : null,
  };
}

/** Who may read a feed differs by credentials: a cache must not share one caller's answer. */
function noSharedCache(reply: FastifyReply): FastifyReply {
  return reply.header('Cache-Control', 'private, no-cache').header('Vary', 'Authorization, Cookie');
}

export async function feedRoutes(app: FastifyInstance, { feeds }: { feeds: ViewFeedDeps }): Promise<void> {
  const page = async (request: FeedRequest) => {
    const found = await readViewFeed(feeds, viewerOf(request), request.params.code, request.query);
    const head: FeedHead = {
      title: found.view.title,
      description: found.view.description,
      origin: publicOrigin(request),
      code: found.view.code,
      updated: found.entries.reduce(
        (latest, entry) => (entry.updatedAt > latest ? entry.updatedAt : latest),
        new Date(found.view.updatedAt).toISOString(),
      ),
    };
    return { head, entries: found.entries, nextCursor: found.nextCursor };
  };
  const schema = { hide: true, params: CodeParams, querystring: FeedQuery };

  app.get('/v/:code/feed.atom', { schema }, async (request: FeedRequest, reply) => {
    const { head, entries, nextCursor } = await page(request);
    return noSharedCache(reply)
      .header('Content-Type', 'application/atom+xml; charset=utf-8')
      .send(atomFeed(head, pageLinks(request, 'feed.atom', nextCursor), entries));
  });

  app.get('/v/:code/feed.json', { schema }, async (request: FeedRequest, reply) => {
    const { head, entries, nextCursor } = await page(request);
    return noSharedCache(reply)
      .header('Content-Type', 'application/feed+json; charset=utf-8')
      .send(JSON.stringify(jsonFeed(head, pageLinks(request, 'feed.json', nextCursor), entries)));
  });

  app.get(
    '/v/:code/events.ics',
    { schema: { hide: true, params: CodeParams } },
    async (request: FastifyRequest<{ Params: { code: string } }>, reply) => {
      const { view, entries } = await readViewCalendar(feeds, viewerOf(request), request.params.code);
      return noSharedCache(reply)
        .header('Content-Type', 'text/calendar; charset=utf-8')
        .send(icalendar({ title: view.title, origin: publicOrigin(request), code: view.code }, entries));
    },
  );
}
