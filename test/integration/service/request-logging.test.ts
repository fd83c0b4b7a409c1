import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import { buildHttpApp } from '../../../src/adapters/http/app.ts';
import { siteHttpOn } from '../../helpers/compose.ts';
import { testDatabase } from '../../helpers/database.ts';

// What the service logs of a request, read from the log itself (issue 31 §6): ids unique across
// processes (UUIDs) or the caller's X-Request-Id, returned on every answer; no webhook token in a
// logged URL; health checks at debug only.

async function loggedApp(t: Test, logLevel: string) {
  const db = await testDatabase(t);
  const lines: Record<string, unknown>[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = await buildHttpApp(
    {
      version: 'test',
      features: [siteHttpOn(db.pool)],
    },
    { logLevel, logStream, bodyLimitBytes: 1024 * 1024 },
  );
  t.teardown(() => app.close());
  return { app, lines };
}

t.test('request ids, the X-Request-Id header and redacted URLs in the log', async (t) => {
  const { app, lines } = await loggedApp(t, 'info');
  const token = 'f'.repeat(64);
  const webhook = await app.inject({ method: 'POST', url: `/api/webhooks/trigger/${token}` });
  const first = await app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
  const second = await app.inject({ method: 'GET', url: '/api/v1/nothing-here' });
  const given = await app.inject({
    method: 'GET',
    url: '/api/v1/nothing-here',
    headers: { 'x-request-id': 'edge-1234' },
  });

  const ids = [webhook, first, second].map((answer) => String(answer.headers['x-request-id']));
  for (const id of ids) t.match(id, /^[0-9a-f-]{36}$/, 'a UUID on the answer');
  t.equal(new Set(ids).size, 3, 'one per request');
  t.equal(given.headers['x-request-id'], 'edge-1234', "the caller's own id, returned");

  // Secrets where no route takes them: an unknown path, a refused query, a 4xx's logged message.
  for (const url of [
    `/api/webhooks/trigger/${token}/more`,
    `/api/v1/events?limit=nope&api_key=${token}`,
    `/api/v1/events?access_token=${token}`,
  ])
    await app.inject({ method: 'GET', url });
  const text = JSON.stringify(lines);
  t.notMatch(text, token, 'the token is in no log line');
  const completed = lines.filter((line) => line.msg === 'request completed').slice(0, 4);
  t.same(
    completed.map((line) => [line.reqId, line.url, line.statusCode]),
    [
      [ids[0], '/api/webhooks/trigger/[redacted]', webhook.statusCode],
      [ids[1], '/api/v1/nothing-here', 404],
      [ids[2], '/api/v1/nothing-here', 404],
      ['edge-1234', '/api/v1/nothing-here', 404],
    ],
    'one line per request, by its id, with the redacted URL',
  );
  t.notOk(
    lines.some((line) => line.msg === 'incoming request'),
    'not the two lines per request of Fastify',
  );
});

t.test('health and liveness checks are logged at debug only', async (t) => {
  const info = await loggedApp(t, 'info');
  t.equal((await info.app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200);
  const live = await info.app.inject({ method: 'GET', url: '/api/live' });
  t.same([live.statusCode, live.json()], [200, { status: 'ok' }], 'liveness: this process answers');
  t.same(info.lines, [], 'nothing at info');
  const debug = await loggedApp(t, 'debug');
  await debug.app.inject({ method: 'GET', url: '/api/health' });
  await debug.app.inject({ method: 'GET', url: '/api/live' });
  t.match(
    debug.lines.filter((line) => line.msg === 'request completed'),
    [
      { level: 20, url: '/api/health', statusCode: 200 },
      { level: 20, url: '/api/live', statusCode: 200 },
    ],
    'one line each at debug',
  );
});
