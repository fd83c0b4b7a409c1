import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  type ApiKeyDeps,
  createApiKey,
  listApiKeys,
  revokeApiKey,
} from '../../../application/accounts/api-keys.ts';
import { MAX_KEY_CATALOGS } from '../../../domain/accounts/api-keys.ts';
import { errorResponses } from '../error-body.ts';
import { IdParams, NoQuery, RecordId } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';

// /api/api-keys: the caller's API keys (docs/api.md "API keys"). A session only: a request made
// with a key is refused (403 API_KEY_NOT_ALLOWED) before it gets here (adapters/http/authentication.ts).

const tags = ['accounts'];
const signedInAndLimited = { rateLimit: true, requiresUser: true } as const;

const ApiKeyDoc = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    prefix: Type.String({
      description: 'The start of the secret, to recognise the key: cmk_<id>_<4 characters>',
    }),
    scope: Type.Union([Type.Literal('read'), Type.Literal('write')]),
    catalogs: Type.Union([Type.Literal('all'), Type.Array(Type.Integer())]),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Recorded at most once a minute',
    }),
  },
  { additionalProperties: false },
);

const NewApiKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scope: Type.Union([Type.Literal('read'), Type.Literal('write')], {
      description: 'read: GET and HEAD only; write: also the write routes of the API',
    }),
    catalogs: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Array(RecordId, { minItems: 1, maxItems: MAX_KEY_CATALOGS })], {
        description: "'all' (the default: every catalog of yours, now and later) or a list of your catalogs",
      }),
    ),
  },
  { additionalProperties: false },
);

const docOf = (key: Awaited<ReturnType<typeof listApiKeys>>[number]) => ({
  id: key.id,
  name: key.name,
  prefix: key.prefix,
  scope: key.scope,
  catalogs: key.catalogIds ?? ('all' as const),
  createdAt: key.createdAt,
  lastUsedAt: key.lastUsedAt,
});

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ apiKeys: ApiKeyDeps }> = async (app, { apiKeys }) => {
  const ApiKeyRef = ApiKeyDoc;

  app.get(
    '/api/api-keys',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Your live API keys',
        description: 'Names, prefixes, scopes, catalogs, creation and last use; never the secrets.',
        querystring: NoQuery,
        response: { 200: Type.Object({ docs: Type.Array(ApiKeyRef) }), ...errorResponses(401, 403, 429) },
      },
    },
    async (request) => ({ docs: (await listApiKeys(apiKeys, viewerOf(request))).map(docOf) }),
  );

  app.post(
    '/api/api-keys',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Create an API key',
        description:
          'The answer holds the secret (`cmk_<id>_<random>`) once; only its hash is kept. Send it as ' +
          '`Authorization: Bearer <secret>`. At most 50 live keys (409 API_KEY_LIMIT).',
        querystring: NoQuery,
        body: NewApiKeyBody,
        response: {
          201: Type.Object({ doc: ApiKeyRef, secret: Type.String(), message: Type.String() }),
          ...errorResponses(400, 401, 403, 409, 429),
        },
      },
    },
    async (request, reply) => {
      const { key, secret } = await createApiKey(apiKeys, viewerOf(request), request.body);
      return reply
        .status(201)
        .send({ doc: docOf(key), secret, message: 'API key created; the secret is shown only now' });
    },
  );

  app.delete(
    '/api/api-keys/:id',
    {
      config: signedInAndLimited,
      schema: {
        tags,
        summary: 'Revoke one of your API keys',
        description: 'At once: the next request with it is a 401. Someone else’s key is a 404.',
        params: IdParams,
        querystring: NoQuery,
        response: {
          200: Type.Object({ id: Type.Integer(), message: Type.String() }),
          ...errorResponses(400, 401, 403, 404, 429),
        },
      },
    },
    async (request) => {
      await revokeApiKey(apiKeys, viewerOf(request), request.params.id);
      return { id: request.params.id, message: 'API key revoked' };
    },
  );
};
