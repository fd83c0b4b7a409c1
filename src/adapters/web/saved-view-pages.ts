import type { FastifyInstance } from 'fastify';
import { readView, type SavedViewDeps } from '../../application/site/saved-views.ts';
import { exploreQuery, frameAncestors } from '../../domain/site/saved-views.ts';
import { viewerOf } from '../http/viewer.ts';

// A saved view's short link and its embed (issue 38 §1–2). `/v/{code}` sends the browser to the
// Explore page on the view's state; `/embed/{code}` is the map and timeline alone, framable only by
// the origins on the view's allow-list: `Content-Security-Policy: frame-ancestors` lists them, and
// without a list it is 'none' with `X-Frame-Options: DENY` (older browsers). A view the caller may
// not read is the same 404 as one that does not exist (the use case decides).

type SavedViewPagesOptions = {
  views: SavedViewDeps;
  /** The Explore page drawn as an embed of a view (explore.ts). */
  embedPage: (view: { embed: true; view: string; title: string; link: string }) => string;
  /** The Explore page's Content-Security-Policy with the given `frame-ancestors`. */
  cspWith: (frameAncestors: string) => string;
};

const CodeParams = {
  type: 'object',
  properties: { code: { type: 'string', maxLength: 64 } },
  required: ['code'],
  additionalProperties: false,
} as const;

export async function savedViewPages(app: FastifyInstance, options: SavedViewPagesOptions): Promise<void> {
  app.get<{ Params: { code: string } }>(
    '/v/:code',
    { schema: { hide: true, params: CodeParams } },
    async (request, reply) => {
      const view = await readView(options.views, viewerOf(request), request.params.code);
      // A view can change: the link is looked up every time, never cached.
      return reply.header('Cache-Control', 'no-store').redirect(`/${exploreQuery(view.state)}`, 302);
    },
  );

  app.get<{ Params: { code: string } }>(
    '/embed/:code',
    { schema: { hide: true, params: CodeParams } },
    async (request, reply) => {
      const view = await readView(options.views, viewerOf(request), request.params.code);
      reply
        .header('Content-Security-Policy', options.cspWith(frameAncestors(view.embedOrigins)))
        .header('Cache-Control', 'no-store')
        .header('Content-Type', 'text/html; charset=utf-8');
      if (view.embedOrigins.length === 0) reply.header('X-Frame-Options', 'DENY');
      return reply.send(
        options.embedPage({
          embed: true,
          view: exploreQuery(view.state),
          title: view.title,
          link: `/v/${view.code}`,
        }),
      );
    },
  );
}
