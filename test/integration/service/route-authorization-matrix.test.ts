import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { registeredRoutes } from '../../../src/adapters/http/route-registry.ts';
import { CALLERS, type Caller, matrixFixture } from './route-authorization-fixture.ts';
import { apiDocWithMatrix, MATRIX_END, MATRIX_START } from './route-authorization-doc.ts';
import { type MatrixRow, ROUTE_MATRIX } from './route-authorization-table.ts';
import { KEY_CALLERS, keyExpectations } from './route-authorization-keys.ts';

// Every route the app registered (read from Fastify, not from a list) has a declared answer for an
// anonymous caller, a stranger, the owner and an admin, and gets it. A new route without a row in
// route-authorization-table.ts fails here, naming the route.

t.test('every registered route answers each caller as the matrix declares', async (t) => {
  const fx = await matrixFixture(t);
  await fx.app.ready();
  const registered = registeredRoutes(fx.app);
  const keys = new Set(registered.map((route) => `${route.method} ${route.url}`));
  const routes = [...keys].filter(
    (key) => !(key.startsWith('HEAD ') && keys.has(key.replace(/^HEAD /, 'GET '))),
  );

  const missing = routes.filter((key) => !(key in ROUTE_MATRIX));
  t.same(missing, [], `routes without a row in route-authorization-table.ts: ${missing.join(', ')}`);
  const stale = Object.keys(ROUTE_MATRIX).filter((key) => !keys.has(key));
  t.same(stale, [], `rows for routes the app does not register: ${stale.join(', ')}`);

  const ordered = [
    ...routes.filter((key) => !ROUTE_MATRIX[key]?.destructive),
    ...routes.filter((key) => ROUTE_MATRIX[key]?.destructive),
  ];
  const wrong: string[] = [];
  for (const key of ordered) {
    const row = ROUTE_MATRIX[key] as MatrixRow | undefined;
    if (!row) continue;
    const method = key.split(' ')[0] as 'GET' | 'POST' | 'PATCH' | 'DELETE';
    const actual: number[] = [];
    for (const caller of CALLERS) {
      const request = await row.request(fx, caller);
      const token =
        request.token ?? (caller === 'anonymous' ? null : fx.tokens[caller as Exclude<Caller, 'anonymous'>]);
      const response = await fx.app.inject({
        method,
        url: request.url,
        headers: { ...(request.headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
        ...(request.payload === undefined ? {} : { payload: request.payload as Record<string, unknown> }),
      });
      actual.push(response.statusCode);
      t.ok(
        response.statusCode < 500,
        `${key} as ${caller}: no server error (${response.body.slice(0, 200)})`,
      );
    }
    if (actual.join() !== row.expect.join())
      wrong.push(`${key}: expected ${row.expect.join('/')}, got ${actual.join('/')}`);
    // The owner's API keys, on the owner's request (a key acts as its owner, within its limits).
    const byKey: number[] = [];
    for (const caller of KEY_CALLERS) {
      const request = await row.request(fx, 'owner');
      const response = await fx.app.inject({
        method,
        url: request.url,
        headers: { ...(request.headers ?? {}), authorization: `Bearer ${fx.keys[caller]}` },
        ...(request.payload === undefined ? {} : { payload: request.payload as Record<string, unknown> }),
      });
      byKey.push(response.statusCode);
      t.ok(
        response.statusCode < 500,
        `${key} with ${caller}: no server error (${response.body.slice(0, 200)})`,
      );
    }
    const expected = keyExpectations(method, key.split(' ')[1] ?? '', row);
    if (byKey.join() !== expected.join())
      wrong.push(`${key} (keys): expected ${expected.join('/')}, got ${byKey.join('/')}`);
  }
  t.same(wrong, [], 'anonymous/stranger/owner/admin and read/write/other-catalog key statuses as declared');
});

t.test('docs/api.md shows the matrix as the table declares it (scripts/write-route-matrix.ts)', async (t) => {
  const file = path.join(projectRoot, 'docs', 'api.md');
  const doc = readFileSync(file, 'utf8');
  t.ok(doc.includes(MATRIX_START) && doc.includes(MATRIX_END), 'the generated section is there');
  t.equal(
    await apiDocWithMatrix(doc, file),
    doc,
    'run `node scripts/write-route-matrix.ts` after changing the table',
  );
});
