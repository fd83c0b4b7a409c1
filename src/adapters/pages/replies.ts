import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Flash } from './layout.ts';

// How the server-rendered pages (dashboard, /account, import progress) answer: redirects that
// carry a flash message (post/redirect/get), and HTML replies with the headers every page needs.

export function flashFrom(request: FastifyRequest): Flash {
  const query = request.query as Record<string, unknown>;
  return {
    notice: typeof query.notice === 'string' ? query.notice.slice(0, 300) : undefined,
    error: typeof query.error === 'string' ? query.error.slice(0, 300) : undefined,
  };
}

export function redirect(reply: FastifyReply, path: string, flash: Flash = {}): FastifyReply {
  const query = new URLSearchParams();
  if (flash.notice) query.set('notice', flash.notice);
  if (flash.error) query.set('error', flash.error);
  const suffix = query.size > 0 ? `?${query}` : '';
  return reply.redirect(`${path}${suffix}`, 303);
}

/**
 * A server-rendered page: never cached, never framed, forms to this origin only, and no scripts at
 * all, or (`scripts`) only the pages' own modules from this origin (page-scripts.ts), which may then
 * call this origin. Never inline code: a page's data for its script is JSON data or data- attributes.
 */
export function htmlReply(
  reply: FastifyReply,
  status: number,
  options: { scripts?: boolean } = {},
): FastifyReply {
  const script = options.scripts ? ` script-src 'self'; connect-src 'self';` : '';
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header('Cache-Control', 'no-store')
    .header('X-Frame-Options', 'DENY')
    .header(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'unsafe-inline';${script} form-action 'self'; frame-ancestors 'none'`,
    );
}
