import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { testApp } from '../../helpers/app.ts';

// Bad input of every kind gets the spec's error body and a 4xx; only a bug is a 500, and even then
// nothing internal leaks.

t.test('error responses', async (t) => {
  const { app } = await testApp(t);
  app.get('/test/boom', async () => {
    throw new Error('secret internals: password=hunter2 at /srv/chronomap/src/x.ts:12');
  });
  app.post(
    '/test/echo',
    { schema: { body: { type: 'object', properties: { n: { type: 'integer' } } } } },
    async (req) => req.body,
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;

  t.test('unknown route: 404 with the error body', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/api/nope?x=1' });
    t.equal(response.statusCode, 404);
    t.same(response.json(), {
      error: 'Not Found',
      message: 'No route GET /api/nope',
      code: 'ROUTE_NOT_FOUND',
    });
  });

  t.test('unknown query parameter: 400 naming it', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/api/health?verbose=1' });
    t.equal(response.statusCode, 400);
    t.equal(response.json().error, 'Bad Request');
    t.match(response.json().message, /unknown parameter "verbose"/);
    t.equal(response.json().code, 'INVALID_PARAMETER');
  });

  t.test('malformed query string is not a 500', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/api/health?%E0%A4%A=1&&=' });
    t.ok(response.statusCode === 400 || response.statusCode === 200, `got ${response.statusCode}`);
    t.not(response.statusCode, 500);
  });

  t.test('invalid JSON body: 400', async (t) => {
    const response = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: '{"n": 1,',
    });
    t.equal(response.statusCode, 400);
    t.equal(response.json().error, 'Bad Request');
  });

  t.test('body of the wrong type: 400 naming the field', async (t) => {
    const response = await app.inject({ method: 'POST', url: '/test/echo', payload: { n: 'one' } });
    t.equal(response.statusCode, 400);
    t.match(response.json().message, /body\.n must be integer/);
  });

  t.test('oversized body: 413', async (t) => {
    const response = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/json' },
      payload: `{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`,
    });
    t.equal(response.statusCode, 413);
    t.equal(response.json().error, 'Payload Too Large');
  });

  t.test('unsupported media type: 415 with the error body', async (t) => {
    const response = await app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { 'content-type': 'application/x-unknown' },
      payload: 'abc',
    });
    t.equal(response.statusCode, 415);
    t.equal(response.json().error, 'Unsupported Media Type');
  });

  t.test('an unexpected failure is a 500 that reveals nothing', async (t) => {
    const response = await app.inject({ method: 'GET', url: '/test/boom' });
    t.equal(response.statusCode, 500);
    t.same(response.json(), {
      error: 'Internal Server Error',
      message: 'An unexpected error occurred; it has been logged.',
    });
    t.notMatch(response.body, /hunter2|\/srv\/|stack/);
  });

  t.test('huge headers over a real socket: 400 with the error body', async (t) => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/api/health', headers: { 'x-huge': 'a'.repeat(64 * 1024) } },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    t.equal(status, 400);
    t.same(JSON.parse(body), {
      error: 'Bad Request',
      message: 'request headers exceed 16384 bytes',
      code: 'HEADERS_TOO_LARGE',
    });
  });
});
