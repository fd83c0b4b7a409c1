// The chronomap-runner command: refuses bad configuration in one line, serves the API, and on
// SIGTERM stops its containers before exiting.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const bin = fileURLToPath(new URL('../bin/chronomap-runner.js', import.meta.url));
const key = 'cli-test-key-0123456789';
const baseEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' };

t.test('refuses to start without a usable key or with a bad variable', async (t) => {
  for (const [env, message] of [
    [{}, 'chronomap-runner: SCRAPER_API_KEY is required'],
    [
      { SCRAPER_API_KEY: 'too-short' },
      'chronomap-runner: SCRAPER_API_KEY must be at least 16 characters, it has 9',
    ],
    [
      { SCRAPER_API_KEY: key, SCRAPER_MAX_CONCURRENT: '0' },
      'chronomap-runner: SCRAPER_MAX_CONCURRENT must be between 1 and 256, got 0',
    ],
    [
      { SCRAPER_API_KEY: key, SCRAPER_NETWORK: 'no-such-network' },
      'chronomap-runner: cannot sandbox scrapers on this host: network no-such-network is missing',
    ],
  ] as const) {
    const r = spawnSync(bin, { env: { ...baseEnv, ...env }, encoding: 'utf8' });
    t.equal(r.status, 1, message);
    t.equal(r.stderr.split('\n').filter(Boolean).length, 1, 'one line');
    t.match(r.stderr, message);
  }
});

/** Starts the runner command on a free port; resolves once it listens. */
async function startRunner(dataDir: string) {
  const child = spawn(bin, {
    env: {
      ...baseEnv,
      SCRAPER_API_KEY: key,
      SCRAPER_PORT: '0',
      SCRAPER_HOST: '127.0.0.1',
      SCRAPER_DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', () => reject(new Error(`runner exited early: ${log}`)));
  });
  return { child, exited, base: `http://127.0.0.1:${port}`, log: () => log };
}

const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const containerExists = (runId: string) =>
  spawnSync('podman', ['container', 'exists', `chronomap-run-${runId}`]).status === 0;

/** Starts a long run and resolves once its container runs; the run's answer is returned too. */
async function startLongRun(base: string) {
  const runId = randomUUID();
  const answer = fetch(`${base}/run`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({
      run_id: runId,
      runtime: 'python',
      entrypoint: 'main.py',
      code: { 'main.py': 'import time\ntime.sleep(300)\n' },
    }),
  }).then(
    (r) => r.json(),
    (err: Error) => ({ fetchError: err.message }),
  );
  for (;;) {
    const status = await (await fetch(`${base}/status/${runId}`, { headers: auth })).json();
    if (status.phase === 'running' && containerExists(runId)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { runId, answer };
}

t.test('SIGTERM stops running containers, then the process exits', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'chronomap-cli-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const runner = await startRunner(dataDir);
  const { runId, answer } = await startLongRun(runner.base);
  runner.child.kill('SIGTERM');
  t.match(await answer, { status: 'failed', code: 'RUNNER_SHUTDOWN' });
  t.equal(await runner.exited, 0);
  t.notOk(containerExists(runId), 'the container is gone');
  t.same(readdirSync(dataDir), [], 'the workspace is gone');
});

t.test(
  'after kill -9 of the runner, the restarted runner removes the orphaned container and workspace',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'chronomap-cli-'));
    t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
    const first = await startRunner(dataDir);
    const { runId, answer } = await startLongRun(first.base);
    first.child.kill('SIGKILL');
    await first.exited;
    t.match(await answer, { fetchError: String }, 'the request died with the runner');
    t.ok(containerExists(runId), 'the container outlived its runner');
    t.equal(readdirSync(dataDir).length, 1, 'so did its workspace');
    const inspect = spawnSync(
      'podman',
      ['inspect', `chronomap-run-${runId}`, '--format', '{{.Config.Timeout}}'],
      { encoding: 'utf8' },
    );
    t.equal(inspect.stdout.trim(), '330', 'it has its own time limit: the 300 s default timeout + 30 s');

    const second = await startRunner(dataDir);
    t.teardown(() => second.child.kill('SIGTERM'));
    t.match(
      second.log(),
      /removed the containers, workspaces and address reservations left by a runner or podman that ended without cleaning up/,
    );
    t.notOk(containerExists(runId), 'the orphaned container is gone');
    t.same(readdirSync(dataDir), [], 'the orphaned workspace is gone');
    t.notMatch(readFileSync('/proc/self/mountinfo', 'utf8'), dataDir, 'its file systems are unmounted');
    second.child.kill('SIGTERM');
    t.equal(await second.exited, 0);
  },
);
