import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import t from 'tap';
import { Type } from 'typebox';
import { ErrorBody } from '../../../../src/adapters/http/error-body.ts';
import {
  documented,
  DOCUMENTED_KEYWORDS,
  OPENAPI_DOCUMENT_BASE,
  OPENAPI_DOCUMENT_HOOKS,
  operationIdFor,
  USER_SECURITY,
} from '../../../../src/adapters/http/openapi-document.ts';

// The document's rules come from the routes' options, whoever registers them: a route knows
// nothing about operationIds, security schemes or rate-limit headers and still gets them right.

type Operation = {
  operationId: string;
  security: unknown[];
  parameters?: Array<{ name: string; schema?: Record<string, unknown>; content?: unknown }>;
  requestBody?: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: unknown }>;
};

async function documentOf(register: (app: FastifyInstance) => void): Promise<Record<string, unknown>> {
  const app = Fastify({
    ajv: { customOptions: { keywords: DOCUMENTED_KEYWORDS, removeAdditional: false } },
  });
  app.addSchema(ErrorBody);
  await app.register(swagger, {
    openapi: { openapi: '3.1.0', info: { title: 't', version: '1' }, ...OPENAPI_DOCUMENT_BASE },
    ...OPENAPI_DOCUMENT_HOOKS,
    refResolver: { buildLocalReference: (json, _b, _f, i) => String(json.$id ?? `def-${i}`) },
  });
  register(app);
  await app.ready();
  const document = app.swagger() as Record<string, unknown>;
  await app.close();
  return document;
}

const operation = (document: Record<string, unknown>, method: string, path: string) =>
  (document.paths as Record<string, Record<string, Operation>>)[path]?.[method] as Operation;

const OPERATION_IDS: Array<[string, string, string]> = [
  ['GET', '/api/v1/events', 'getV1Events'],
  ['get', '/api/v1/events/geo/stats', 'getV1EventsGeoStats'],
  ['GET', '/api/v1/datasets/{id}/schema/infer', 'getV1DatasetsByIdSchemaInfer'],
  ['POST', '/api/ingest-files', 'postIngestFiles'],
  ['GET', '/api/v1/events.geojson', 'getV1EventsGeojson'],
  ['GET', '/api/v1/tiles/{z}/{x}/{y}.mvt', 'getV1TilesByZByXByYMvt'],
  ['GET', '/ogc/collections/{collectionId}/items', 'getOgcCollectionsByCollectionIdItems'],
  ['GET', '/', 'getRoot'],
];

t.test('operationIds are readable and come from the method and the path', async (t) => {
  for (const [method, path, id] of OPERATION_IDS)
    t.equal(operationIdFor(method, path), id, `${method} ${path}`);
});

t.test('security, rate limits, error bodies and descriptions follow the route options', async (t) => {
  const document = await documentOf((app) => {
    app.get('/api/v1/things', { schema: { response: { 200: Type.Object({}) } } }, async () => ({}));
    app.post(
      '/api/mine',
      { config: { requiresUser: true }, schema: { response: { 201: Type.Object({}) } } },
      async () => ({}),
    );
    app.post('/api/limited', { config: { rateLimit: true } }, async () => ({}));
    app.get('/api/api-keys', { config: { requiresUser: true } }, async () => ({}));
    app.post(
      '/api/upload',
      {
        schema: {
          consumes: ['multipart/form-data'],
          security: USER_SECURITY,
          documentedBody: Type.Object({ file: Type.String({ format: 'binary' }) }),
          response: { 201: Type.Object({}), 400: Type.Ref('ErrorBody') },
        },
      },
      async () => ({}),
    );
  });
  t.same(Object.keys(document.components as object).sort(), ['schemas', 'securitySchemes']);
  t.same(document.servers, [{ url: '/', description: 'The instance that serves this document' }]);

  const things = operation(document, 'get', '/api/v1/things');
  t.equal(things.operationId, 'getV1Things');
  t.same(things.security, [], 'public');
  t.equal(things.responses[200]?.description, 'OK');
  t.ok(things.responses[200]?.headers?.['X-RateLimit-Remaining'], 'rate headers on success');
  t.same(Object.keys(things.responses[429]?.headers ?? {}).sort(), [
    'RateLimit',
    'RateLimit-Policy',
    'Retry-After',
    'X-RateLimit-Limit',
    'X-RateLimit-Remaining',
    'X-RateLimit-Reset',
  ]);

  const mine = operation(document, 'post', '/api/mine');
  t.same(mine.security, [{ bearerAuth: [] }, { jwtAuth: [] }, { cookieAuth: [] }, { apiKeyAuth: [] }]);
  t.same(Object.keys(mine.responses), ['201', '401'], 'a 401, and no 429 where no limit applies');
  t.same(mine.responses[401]?.content, {
    'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } },
  });

  t.ok(operation(document, 'post', '/api/limited').responses[429], 'config.rateLimit');
  t.same(
    operation(document, 'get', '/api/api-keys').security,
    [{ bearerAuth: [] }, { jwtAuth: [] }, { cookieAuth: [] }],
    'an account or key route: every scheme but the API key, which never calls it',
  );

  const upload = operation(document, 'post', '/api/upload');
  t.same(upload.security, USER_SECURITY);
  t.same(Object.keys(upload.requestBody?.content ?? {}), ['multipart/form-data']);
  t.same(upload.requestBody?.content['multipart/form-data']?.schema.properties.file, {
    type: 'string',
    format: 'binary',
  });
});

t.test('documented facts reach the document, not the validator', async (t) => {
  const app = Fastify({ ajv: { customOptions: { keywords: DOCUMENTED_KEYWORDS, removeAdditional: false } } });
  await app.register(swagger, {
    openapi: { openapi: '3.1.0', info: { title: 't', version: '1' }, ...OPENAPI_DOCUMENT_BASE },
    ...OPENAPI_DOCUMENT_HOOKS,
  });
  app.get(
    '/api/v1/grouped',
    {
      schema: {
        querystring: Type.Object({
          groupBy: Type.String({ ...documented({ enum: ['catalog', 'dataset'] }) }),
          bounds: Type.Optional(
            Type.String({ ...documented({ 'x-consume': 'application/json', type: 'object' }) }),
          ),
        }),
      },
    },
    async (request) => request.query,
  );
  await app.ready();
  t.teardown(() => app.close());
  const grouped = operation(app.swagger() as Record<string, unknown>, 'get', '/api/v1/grouped');
  t.same(grouped.parameters?.find((p) => p.name === 'groupBy')?.schema, {
    type: 'string',
    enum: ['catalog', 'dataset'],
  });
  t.ok(grouped.parameters?.find((p) => p.name === 'bounds')?.content, 'bounds is a JSON-content parameter');
  const lenient = await app.inject({ url: '/api/v1/grouped?groupBy=%20catalog%20' });
  t.equal(lenient.statusCode, 200, 'the parser, not Fastify, decides: a padded value still arrives');
});

t.test('two routes that would share an operationId fail the document, naming both', async (t) => {
  await t.rejects(
    documentOf((app) => {
      app.get('/api/foo-bar', async () => ({}));
      app.get('/api/foo/bar', async () => ({}));
    }),
    /GET \/api\/foo\/bar and GET \/api\/foo-bar both get the operationId "getFooBar"/,
  );
});
