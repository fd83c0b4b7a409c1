import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { testApp } from '../../helpers/app.ts';
import { ROUTE_MATRIX } from './route-authorization-table.ts';

// docs/openapi.json is the committed contract; a route change that is not written out with
// `npm run openapi:write` fails here.

t.test('the served OpenAPI document matches the committed docs/openapi.json', async (t) => {
  const { app } = await testApp(t);
  const response = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  t.equal(response.statusCode, 200);
  const served = response.json();
  t.equal(served.openapi, '3.1.0');
  t.ok(served.paths['/api/health'], 'health is documented');
  const committed = JSON.parse(readFileSync(path.join(projectRoot, 'docs', 'openapi.json'), 'utf8'));
  t.same(served, committed, 'docs/openapi.json is stale: run `npm run openapi:write` and commit it');
});

t.test('the browsable API documentation is served', async (t) => {
  const { app } = await testApp(t);
  const response = await app.inject({ method: 'GET', url: '/api/docs/' });
  t.equal(response.statusCode, 200);
  t.match(response.headers['content-type'], /text\/html/);
  t.match(response.body, /swagger/i);
});

type Operation = {
  operationId?: string;
  security?: unknown[];
  responses: Record<string, { description?: string; content?: unknown; headers?: Record<string, unknown> }>;
};

/** Every operation of the served document as `METHOD /path` (path in Fastify's `:param` form). */
function operationsOf(document: { paths: Record<string, Record<string, Operation>> }) {
  return Object.entries(document.paths).flatMap(([url, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      key: `${method.toUpperCase()} ${url.replace(/\{([^}]+)\}/g, ':$1')}`,
      operation,
    })),
  );
}

t.test('every operation, whoever added its route, has what generators and linters need', async (t) => {
  const { app } = await testApp(t);
  const document = (await app.inject({ url: '/api/openapi.json' })).json();
  t.ok(document.servers?.length, 'servers');
  t.same(Object.keys(document.components.securitySchemes).sort(), [
    'apiKeyAuth',
    'bearerAuth',
    'cookieAuth',
    'jwtAuth',
  ]);
  const operations = operationsOf(document);
  const ids = operations.map(({ operation }) => operation.operationId);
  t.equal(new Set(ids).size, operations.length, 'a unique operationId on every operation');
  for (const { key, operation } of operations) {
    t.ok(/^[a-z][A-Za-z0-9]*$/.test(operation.operationId ?? ''), `${key}: operationId`);
    t.ok(Array.isArray(operation.security), `${key}: security declared`);
    for (const [status, response] of Object.entries(operation.responses)) {
      t.ok(
        response.description && response.description !== 'Default Response',
        `${key} ${status}: described`,
      );
      if (status.startsWith('4')) t.ok(response.content, `${key} ${status}: error body`);
    }
    if (key.startsWith('GET /api/v1/')) {
      t.ok(operation.responses['429']?.headers?.['Retry-After'], `${key}: 429 with Retry-After`);
    }
  }
});

t.test(
  'operations that turn an anonymous caller away (the route matrix) declare the security schemes',
  async (t) => {
    const { app } = await testApp(t);
    const operations = operationsOf((await app.inject({ url: '/api/openapi.json' })).json());
    for (const { key, operation } of operations) {
      const row = ROUTE_MATRIX[key];
      if (!row) continue;
      // 401 for the anonymous caller but not for the owner: a login is what it takes (login itself
      // answers 401 to everyone for a wrong password, and is public).
      const needsLogin = row.expect[0] === 401 && row.expect[2] !== 401;
      t.equal((operation.security ?? []).length > 0, needsLogin, `${key}: security matches the matrix`);
    }
  },
);
