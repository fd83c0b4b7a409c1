import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { listChanges } from '../../../application/read/list-changes.ts';
import type { RawQuery } from '../../../domain/read/read-query.ts';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../../domain/read/read-query.ts';
import type { ChangeFeed } from '../../../ports/read/change-feed.ts';
import { errorResponses } from '../error-body.ts';
import { viewerOf } from '../viewer.ts';
import { Event, filterParameters, Query } from './events-schemas.ts';

// GET /api/v1/changes: the change feed of issue 39 §1 (src/application/read/list-changes.ts).

const Change = Type.Object({
  cursor: Type.String({
    description: 'The position of this change: resuming from it gives the changes after it.',
  }),
  kind: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('deleted')]),
  eventId: Type.Integer({ minimum: 1 }),
  storedAt: Type.String({ description: 'When the change was stored (UTC).' }),
  event: Type.Optional({ ...Event, description: 'The event as it is now; absent for a deletion.' }),
});

const ChangesPage = Type.Object({
  changes: Type.Array(Change),
  nextCursor: Type.String({
    description: 'Where to resume: pass it as `cursor` (always given, even for an empty page).',
  }),
  hasMore: Type.Boolean({ description: 'True when the page was full: more changes are readable now.' }),
});

const changesQuery = {
  ...filterParameters,
  cursor: Type.Optional(
    Type.String({
      description:
        "The `nextCursor` (or a change's `cursor`) of an earlier answer; absent: from the oldest change kept.",
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      default: DEFAULT_LIMIT,
      minimum: 1,
      maximum: MAX_LIMIT,
      description: `1 to ${MAX_LIMIT}.`,
    }),
  ),
};

export const v1ChangeRoutes: FastifyPluginAsync<{ changes: ChangeFeed }> = async (app, deps) => {
  app.get(
    '/api/v1/changes',
    {
      config: { costly: 'reads' },
      schema: {
        tags: ['events'],
        summary: 'Change feed',
        description:
          'Every event created, updated or deleted that the caller may read and the filters match, in the order the changes ' +
          "were stored (not the events' time: a back-dated import appears). Resume with `nextCursor`: each change is given " +
          'exactly once, including changes of a long transaction that commits after later ones (the feed waits for it). ' +
          'A deletion carries the event id only. Changes are kept for a limited time (docs/api-v1.md); a cursor older than ' +
          'that is answered 410.',
        querystring: Query(changesQuery),
        response: { 200: ChangesPage, ...errorResponses(400, 410, 500) },
      },
    },
    async (request, reply) => {
      const body = await listChanges(deps, viewerOf(request), request.query as RawQuery);
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
};
