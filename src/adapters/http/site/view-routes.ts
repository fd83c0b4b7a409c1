import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import {
  changeView,
  createView,
  deleteView,
  listMyViews,
  readView,
  type SavedViewDeps,
} from '../../../application/site/saved-views.ts';
import type { SavedView } from '../../../domain/site/saved-views.ts';
import { errorResponses } from '../error-body.ts';
import { publicOrigin } from '../public-url.ts';
import { USER_ONLY } from '../require-user.ts';
import { MessageSchema, NoQuery } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import { NewView, ViewChange, ViewCodeParams, ViewDoc, ViewList } from './view-schemas.ts';

// The saved views API (issue 38 §1–2): create, list, read, change and delete a view of the Explore
// page; the use cases (application/site/saved-views.ts) decide who may.

const escapeAttribute = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A view as the API shows it, with its links made absolute for the caller's origin. */
function viewDocument(request: FastifyRequest, view: SavedView) {
  const origin = publicOrigin(request);
  const embedUrl = `${origin}/embed/${view.code}`;
  return {
    id: view.code,
    title: view.title,
    description: view.description,
    state: view.state,
    isPublic: view.isPublic,
    embedOrigins: view.embedOrigins,
    url: `${origin}/v/${view.code}`,
    embedUrl,
    embedSnippet:
      `<iframe src="${embedUrl}" title="${escapeAttribute(view.title)}" width="800" height="600" ` +
      `style="border:0" loading="lazy"></iframe>`,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt,
  };
}

export const viewRoutes: FastifyPluginAsyncTypebox<{ views: SavedViewDeps }> = async (app, { views }) => {
  const tags = ['views'];
  app.post(
    '/api/views',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Save a view of the Explore page',
        description:
          'The map position, filters, time window and drawing mode, with a title; private unless ' +
          '`isPublic`. Answers the view with its short link, its embed URL and an `<iframe>` snippet.',
        querystring: NoQuery,
        body: NewView,
        response: { 201: ViewDoc, ...errorResponses(400, 401) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(viewDocument(request, await createView(views, viewerOf(request), request.body))),
  );

  app.get(
    '/api/views',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Your saved views',
        querystring: NoQuery,
        response: { 200: ViewList, ...errorResponses(400, 401) },
      },
    },
    async (request) => ({
      docs: (await listMyViews(views, viewerOf(request))).map((view) => viewDocument(request, view)),
    }),
  );

  app.get(
    '/api/views/:code',
    {
      schema: {
        tags,
        summary: 'A saved view',
        description: 'A public view for anyone; a private one for its owner and admins (404 for others).',
        params: ViewCodeParams,
        querystring: NoQuery,
        response: { 200: ViewDoc, ...errorResponses(400, 404) },
      },
    },
    async (request) => viewDocument(request, await readView(views, viewerOf(request), request.params.code)),
  );

  app.patch(
    '/api/views/:code',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Change a saved view (its owner and admins)',
        description: "Send only what changes. Another user's view is a 404, as one that does not exist.",
        params: ViewCodeParams,
        querystring: NoQuery,
        body: ViewChange,
        response: { 200: ViewDoc, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) =>
      viewDocument(request, await changeView(views, viewerOf(request), request.params.code, request.body)),
  );

  app.delete(
    '/api/views/:code',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Delete a saved view (its owner and admins)',
        params: ViewCodeParams,
        querystring: NoQuery,
        response: { 200: MessageSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      await deleteView(views, viewerOf(request), request.params.code);
      return { message: 'The view was deleted; its link and embed no longer open.' };
    },
  );
};
