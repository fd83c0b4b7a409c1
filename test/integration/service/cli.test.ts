import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { ensureEmbeddedCluster } from '../../../src/adapters/postgres/embedded-cluster.ts';
import { runCli, startCli, waitForOutput } from '../../helpers/cli.ts';
import { testDatabase } from '../../helpers/database.ts';

const noStackTrace = /\n\s+at .+\(.*:\d+:\d+\)/;

t.test('bad configuration: exit 1 and one message naming every bad variable', async (t) => {
  const result = await runCli(['start'], { PORT: 'eighty', LOG_LEVEL: 'chatty' });
  t.equal(result.code, 1);
  t.match(result.stderr, /PORT: must be an integer/);
  t.match(result.stderr, /LOG_LEVEL: must be one of/);
  t.notMatch(result.stderr, noStackTrace);
});

t.test('database down at start-up: exit 1 naming the URL tried, password redacted', async (t) => {
  const result = await runCli(['start'], {
    DATABASE_URL: 'postgres://chronomap:s3cret@127.0.0.1:9/chronomap',
  });
  t.equal(result.code, 1);
  t.match(
    result.stderr,
    /cannot connect to PostgreSQL at postgres:\/\/chronomap:\*\*\*@127\.0\.0\.1:9\/chronomap/,
  );
  t.notMatch(result.stderr, /s3cret/);
  t.notMatch(result.stderr, noStackTrace);
});

t.test(
  'a quotas file of an earlier version starts the service; a wrong key is one configuration line',
  async (t) => {
    const db = await testDatabase(t);
    const earlier = path.join(projectRoot, 'test/fixtures/config/quotas-4fdef31.yaml');
    const child = startCli(['api'], {
      DATABASE_URL: db.url,
      PORT: '0',
      LOG_LEVEL: 'warn',
      QUOTAS_CONFIG: earlier,
    });
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    const [, address] = await waitForOutput(child, /listening on (http:\/\/[\d.:]+)/);
    t.equal((await fetch(`${address}/api/v1/sources/stats`)).status, 200, 'serving with the earlier file');

    const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-quotas-'));
    const wrong = path.join(dir, 'quotas.yaml');
    writeFileSync(wrong, 'tokenTtlSecs: 60\n');
    const result = await runCli(['api'], { DATABASE_URL: db.url, PORT: '0', QUOTAS_CONFIG: wrong });
    t.equal(result.code, 1);
    t.match(result.stderr, /QUOTAS_CONFIG: .*quotas\.yaml: tokenTtlSecs: unknown key/);
    t.notMatch(result.stderr, /unexpected error/);
    t.notMatch(result.stderr, noStackTrace);
  },
);

t.test('unknown command: usage and exit 2', async (t) => {
  const result = await runCli(['frobnicate'], {});
  t.equal(result.code, 2);
  t.match(result.stderr, /unknown command "frobnicate"/);
  t.match(result.stderr, /Usage: chronomap <command>/);
});

t.test('migrate, create-admin and seed-demo against DATABASE_URL', async (t) => {
  const db = await testDatabase(t);
  const env = { DATABASE_URL: db.url };
  const migrate = await runCli(['migrate'], env);
  t.equal(migrate.code, 0, migrate.stderr);
  t.match(migrate.stdout, /database is up to date/);
  const admin = await runCli(
    ['create-admin', '--email', 'ops@example.org', '--password', 'a long password'],
    env,
  );
  t.equal(admin.code, 0, admin.stderr);
  t.match(admin.stdout, /created administrator ops@example\.org/);
  const weak = await runCli(['create-admin', '--email', 'ops2@example.org', '--password', 'short'], env);
  t.equal(weak.code, 1);
  t.match(weak.stderr, /at least 10 characters/);
  const seed = await runCli(['seed-demo'], env);
  t.equal(seed.code, 0, seed.stderr);
  t.match(seed.stdout, /read 1943 rows, stored 1943 new events/);
});

t.test(
  'start on the embedded database: health ok, survives a database restart, stops on SIGTERM',
  async (t) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-cli-'));
    chmodSync(dataDir, 0o755); // as root the cluster runs as the postgres user, which must reach it
    const cluster = () => ensureEmbeddedCluster({ dataDir: path.join(dataDir, 'postgres') });
    t.teardown(async () => {
      await (await cluster()).stop().catch(() => {});
    });

    const child = startCli(['start'], { CHRONOMAP_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' });
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    const [, address] = await waitForOutput(child, /listening on (http:\/\/[\d.:]+)/);
    const health = async () => {
      const response = await fetch(`${address}/api/health`);
      return { status: response.status, body: (await response.json()) as Record<string, { status: string }> };
    };

    const first = await health();
    t.equal(first.status, 200);
    t.same(Object.fromEntries(Object.entries(first.body).map(([k, v]) => [k, v.status])), {
      database: 'ok',
      migrations: 'ok',
      postgis: 'ok',
      environment: 'ok',
    });

    await (await cluster()).stop();
    const down = await health();
    t.equal(down.status, 503, 'database stopped: critical');
    t.equal(down.body.database?.status, 'error');

    await cluster(); // starts it again
    let recovered = await health();
    for (let attempt = 0; attempt < 60 && recovered.status !== 200; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      recovered = await health();
    }
    t.equal(recovered.status, 200, 'the service reconnects by itself');

    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    t.equal(await exited, 0, 'SIGTERM shuts down cleanly');
  },
);

t.test(
  'api --processes 2: two processes serve one port, a dead one is replaced, SIGTERM stops all',
  async (t) => {
    const db = await testDatabase(t);
    const child = startCli(['api', '--processes', '2'], {
      DATABASE_URL: db.url,
      PORT: '0',
      LOG_LEVEL: 'warn',
    });
    t.teardown(() => {
      child.kill('SIGKILL');
    });
    const [, address] = await waitForOutput(child, /listening on (http:\/\/[\d.:]+) \(2 processes/);
    const workers = () =>
      readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    const health = async () =>
      (await fetch(`${address}/api/health`, { headers: { connection: 'close' } })).status;
    const [first, second] = workers();
    t.ok(first && second, 'two worker processes');
    t.equal(await health(), 200);

    // Each original process dies in turn; whoever is left (the other, then the replacement) answers.
    // (With none left the port would close until a replacement listens.)
    for (const pid of [first, second]) {
      const noticed = waitForOutput(
        child,
        new RegExp(`API process ${pid} exited with SIGKILL; starting another`),
      );
      const replaced = waitForOutput(child, /API process \d+ listening/);
      process.kill(pid as number, 'SIGKILL');
      await noticed;
      t.equal(await health(), 200, `answered without process ${pid}`);
      await replaced;
    }
    const replacements = workers();
    t.equal(replacements.length, 2, 'two processes again');
    t.notOk(
      replacements.includes(first as number) || replacements.includes(second as number),
      'both replaced',
    );

    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    t.equal(await exited, 0, 'SIGTERM shuts all down cleanly');
    for (const pid of replacements) t.notOk(existsSync(`/proc/${pid}`), `process ${pid} is gone`);
  },
);

t.test('--processes must be a count', async (t) => {
  const result = await runCli(['api', '--processes', 'many'], { DATABASE_URL: 'postgres://x@127.0.0.1:9/x' });
  t.equal(result.code, 2);
  t.match(result.stderr, /--processes must be an integer from 1 to 64 \(got "many"\)/);
});
