import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { testApp } from '../helpers/app.ts';

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
