import type { FastifyRequest } from 'fastify';
import type { Viewer } from '../../domain/access.ts';

/**
 * Who is calling: the user the accounts hooks put on the request from the `payload-token` cookie or
 * a bearer token, null for anonymous. Read through this one function by every route and page, so an
 * app built without those hooks (a test, a process without accounts) is anonymous everywhere alike
 * rather than undefined in some places and null in others.
 */
export function viewerOf(request: FastifyRequest): Viewer {
  return (request as Partial<Pick<FastifyRequest, 'viewer'>>).viewer ?? null;
}
