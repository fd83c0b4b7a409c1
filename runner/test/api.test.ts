// The HTTP contract without running containers: auth, validation codes, open routes, shapes.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { Writable } from 'node:stream';
import { bearerMatches } from '../src/http/auth.ts';
import { buildApp } from '../src/http/app.ts';
import { API_KEY, AUTH, makeHarness } from './support/harness.ts';

const h = makeHarness();
t.teardown(() => h.close());
const valid = () => ({
  run_id: randomUUID(),
  runtime: 'python',
  entrypoint: 'main.py',
  code: { 'main.py': 'print(1)' },
});
const post = (url: string, payload: unknown, headers: Record<string, string> = AUTH) =>
  h.app.inject({ method: 'POST', url, headers, payload: payload as object });

t.test('bearer comparison', async (t) => {
  t.ok(bearerMatches(`Bearer ${API_KEY}`, API_KEY));
  t.notOk(bearerMatches(`Bearer ${API_KEY}x`, API_KEY));
  t.notOk(bearerMatches(API_KEY, API_KEY), 'the scheme is required');
  t.notOk(bearerMatches(undefined, API_KEY));
  t.notOk(bearerMatches('Bearer ', API_KEY));
});

t.test('missing or wrong key: 401 with the error body on every authenticated route', async (t) => {
  const id = randomUUID();
  for (const [method, url] of [
    ['POST', '/run'],
    ['POST', `/stop/${id}`],
    ['GET', `/status/${id}`],
  ] as const) {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-key-wrong-key' },
      { authorization: `Basic ${API_KEY}` },
    ]) {
      const r = await h.app.inject({
        method,
        url,
        headers,
        payload: method === 'POST' ? valid() : undefined,
      });
      t.equal(r.statusCode, 401, `${method} ${url} ${JSON.stringify(headers)}`);
      t.same(r.json(), {
        error: 'Unauthorized',
        message: 'missing or wrong bearer key',
        code: 'UNAUTHORIZED',
      });
    }
  }
});

t.test('/health and /metrics need no key and have the spec shapes', async (t) => {
  const health = await h.app.inject({ method: 'GET', url: '/health' });
  t.equal(health.statusCode, 200);
  t.match(health.json(), { status: 'ok', active_runs: 0, timestamp: /^\d{4}-\d\d-\d\dT/ });
  const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
  t.same(Object.keys(metrics.json()).sort(), [
    'active_runs',
    'queue_capacity',
    'total_failed',
    'total_runs',
    'total_success',
    'total_timeout',
    'uptime_seconds',
  ]);
  t.equal(metrics.json().queue_capacity, 3);
  const prometheus = await h.app.inject({ method: 'GET', url: '/metrics/prometheus' });
  t.equal(prometheus.statusCode, 200, 'no key needed');
  t.match(prometheus.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  t.match(prometheus.body, /^# TYPE chronomap_runner_active_runs gauge$/m);
  t.match(prometheus.body, /^chronomap_runner_capacity 3$/m, 'the same figures as the JSON form');
  t.match(prometheus.body, /^chronomap_runner_runs_total 0$/m);
});

t.test(
  "the caller's X-Request-Id names the request in the log and comes back; a hostile one is replaced",
  async (t) => {
    const lines: Array<{ reqId?: string; msg?: string }> = [];
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = buildApp(h.runs, { logger: true, logStream });
    t.teardown(() => app.close());
    const stop = (requestId: string) =>
      app.inject({
        method: 'POST',
        url: `/stop/${randomUUID()}`,
        headers: { ...AUTH, 'x-request-id': requestId },
      });

    const given = await stop('3f2a9c1e-7b4d-4e21-9a0b-6c5d4e3f2a1b');
    t.equal(given.statusCode, 404);
    t.equal(given.headers['x-request-id'], '3f2a9c1e-7b4d-4e21-9a0b-6c5d4e3f2a1b', 'returned');
    t.ok(
      lines.some(
        (line) => line.reqId === '3f2a9c1e-7b4d-4e21-9a0b-6c5d4e3f2a1b' && line.msg === 'request completed',
      ),
      'the log names the request by the id the main application sent',
    );
    const hostile = await stop('x\ninjected line');
    t.match(hostile.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'replaced by a UUID');
    t.notMatch(JSON.stringify(lines), /injected line/, 'never logged');
  },
);

t.test('request validation answers 400 with a code', async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['run_id not a UUID', { run_id: 'abc' }, 'VALIDATION_ERROR'],
    ['unknown runtime', { runtime: 'ruby' }, 'VALIDATION_ERROR'],
    ['timeout below 1', { limits: { timeout_secs: 0 } }, 'VALIDATION_ERROR'],
    ['timeout above 3600', { limits: { timeout_secs: 3601 } }, 'VALIDATION_ERROR'],
    ['memory below 64', { limits: { memory_mb: 63 } }, 'VALIDATION_ERROR'],
    ['memory above 4096', { limits: { memory_mb: 4097 } }, 'VALIDATION_ERROR'],
    ['unknown field', { image: 'alpine' }, 'VALIDATION_ERROR'],
    ['entrypoint with ..', { entrypoint: '../main.py' }, 'INVALID_PATH'],
    ['entrypoint with a leading /', { entrypoint: '/etc/passwd' }, 'INVALID_PATH'],
    ['code file with ..', { code: { '../evil.py': 'x' } }, 'INVALID_PATH'],
    ['code file with a leading /', { code: { '/etc/cron.d/x': 'x' } }, 'INVALID_PATH'],
    ['code file escaping after normalisation', { code: { 'a/b/../../../x': 'x' } }, 'INVALID_PATH'],
    ['code file used as file and directory', { code: { 'main.py': 'x', 'main.py/x': 'y' } }, 'INVALID_PATH'],
    ['output_file with a path', { output_file: '../x.csv' }, 'INVALID_PATH'],
    ['both code and code_url', { code_url: 'https://example.org/r.git' }, 'INVALID_CODE_SOURCE'],
    ['neither code nor code_url', { code: undefined }, 'INVALID_CODE_SOURCE'],
    ['code_url over http', { code: undefined, code_url: 'http://example.org/r.git' }, 'INVALID_CODE_URL'],
    ['env with a line break', { env: { A: 'x\ny' } }, 'INVALID_ENV'],
  ];
  for (const [what, change, code] of cases) {
    const r = await post('/run', { ...valid(), ...change });
    t.equal(r.statusCode, 400, what);
    t.match(r.json(), { error: 'Bad Request', code, message: String }, what);
  }
  t.same(h.workspaces(), [], 'no workspace was created for a refused request');
  t.equal(h.runs.metrics().total_runs, 0, 'refused requests are not runs');
});

t.test('code_url resolving to a private or loopback address is refused without the flag', async (t) => {
  const r = await post('/run', { ...valid(), code: undefined, code_url: 'https://127.0.0.1/repo.git' });
  t.equal(r.statusCode, 400);
  t.match(r.json(), { code: 'CODE_URL_FORBIDDEN', message: /127\.0\.0\.1 \(loopback\)/ });
  const mapped = await post('/run', {
    ...valid(),
    code: undefined,
    code_url: 'https://[::ffff:169.254.169.254]/repo.git',
  });
  t.match(mapped.json(), { code: 'CODE_URL_FORBIDDEN' });
  for (const host of [
    '[::1]',
    '[fe80::1]',
    '[fd12:3456::1]',
    '[fc00::1]',
    '[::ffff:7f00:1]',
    '[::7f00:1]',
    '[::]',
  ]) {
    const v6 = await post('/run', { ...valid(), code: undefined, code_url: `https://${host}/repo.git` });
    t.equal(v6.statusCode, 400, host);
    t.match(v6.json(), { code: 'CODE_URL_FORBIDDEN' }, host);
  }
  const local = await post('/run', { ...valid(), code: undefined, code_url: 'https://localhost/repo.git' });
  t.match(local.json(), { code: 'CODE_URL_FORBIDDEN' });
  t.same(h.workspaces(), []);
  t.equal(h.runs.metrics().total_runs, 0, 'a refused code_url is not a run');
});

t.test('stop and status of an unknown run', async (t) => {
  const id = randomUUID();
  const stop = await post(`/stop/${id}`, undefined);
  t.equal(stop.statusCode, 404);
  t.match(stop.json(), { error: 'Not Found', code: 'RUN_NOT_FOUND' });
  const status = await h.app.inject({ method: 'GET', url: `/status/${id}`, headers: AUTH });
  t.same(status.json(), { run_id: id, active: false });
  const bad = await h.app.inject({ method: 'GET', url: '/status/not-a-uuid', headers: AUTH });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { code: 'VALIDATION_ERROR' });
});

t.test('unknown routes and malformed JSON keep the error body', async (t) => {
  const r = await h.app.inject({ method: 'GET', url: '/nope', headers: AUTH });
  t.equal(r.statusCode, 404);
  t.match(r.json(), { error: 'Not Found', code: 'NOT_FOUND' });
  const bad = await h.app.inject({
    method: 'POST',
    url: '/run',
    headers: { ...AUTH, 'content-type': 'application/json' },
    payload: '{nope',
  });
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { error: 'Bad Request', message: String });
});
