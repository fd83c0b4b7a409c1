import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import t from 'tap';
import { ensureEmbeddedCluster } from '../../../src/adapters/postgres/embedded-cluster.ts';
import { runCli } from '../../helpers/cli.ts';

// `chronomap stop` (issue 32 §4): the embedded cluster keeps running after the service stops; this
// command stops it, and refuses while a service process (known by its connections' application_name,
// `chronomap-<role>`) still uses it.

t.test('chronomap stop: refused while a service uses the cluster, then stops it', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-stop-'));
  chmodSync(dataDir, 0o755); // as root the cluster runs as the postgres user, which must reach it
  const cluster = await ensureEmbeddedCluster({
    dataDir: path.join(dataDir, 'postgres'),
    durability: 'disposable',
  });
  t.teardown(async () => {
    await cluster.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  });
  const env = { CHRONOMAP_DATA_DIR: dataDir };

  // A connection as a worker's job queue holds one.
  const service = new pg.Client({
    connectionString: cluster.url('postgres'),
    application_name: 'chronomap-worker',
  });
  await service.connect();
  const refused = await runCli(['stop'], env);
  t.equal(refused.code, 1, refused.stderr);
  t.match(refused.stderr, /still used by running chronomap processes: chronomap-worker \(backend \d+\)/);
  t.equal((await service.query('select 1 as one')).rows[0]?.one, 1, 'the cluster still runs');
  await service.end();

  const stopped = await runCli(['stop'], env);
  t.equal(stopped.code, 0, stopped.stderr);
  t.match(stopped.stdout, /embedded PostgreSQL in .* stopped/);
  const probe = new pg.Client({ connectionString: cluster.url('postgres') });
  await t.rejects(probe.connect(), 'nothing answers on its socket any more');

  const again = await runCli(['stop'], env);
  t.equal(again.code, 0);
  t.match(again.stdout, /is not running/, 'stopping a stopped cluster says so');

  const withServer = await runCli(['stop'], { ...env, DATABASE_URL: 'postgres://127.0.0.1:1/x' });
  t.equal(withServer.code, 2, 'a DATABASE_URL server is not ours to stop');
});

t.test('chronomap stop --force stops a cluster in use', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-stop-'));
  chmodSync(dataDir, 0o755);
  const cluster = await ensureEmbeddedCluster({
    dataDir: path.join(dataDir, 'postgres'),
    durability: 'disposable',
  });
  t.teardown(async () => {
    await cluster.stop().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  });
  const service = new pg.Client({
    connectionString: cluster.url('postgres'),
    application_name: 'chronomap-api',
  });
  service.on('error', () => {}); // its server goes away below
  await service.connect();
  const forced = await runCli(['stop', '--force'], { CHRONOMAP_DATA_DIR: dataDir });
  t.equal(forced.code, 0, forced.stderr);
  t.match(forced.stdout, /stopped/);
  await t.rejects(service.query('select 1'), 'the service lost its database');
  await service.end().catch(() => {});
});
