import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ensureEmbeddedCluster } from '../../../src/adapters/postgres/embedded-cluster.ts';
import { runCli } from '../../helpers/cli.ts';
import { adminQuery, testDatabase } from '../../helpers/database.ts';
import { scalar } from '../../helpers/replication.ts';
import { assertTestDatabaseName, loadTestServer, withDatabase } from '../../helpers/test-server.ts';

// `chronomap backup` / `chronomap restore` move a whole installation (database and uploaded files)
// from one database to another, and the embedded default keeps its data durably (fsync on).

t.test('backup, then restore into an empty database: the same events and the same files', async (t) => {
  const source = await testDatabase(t);
  const sourceDir = mkdtempSync(path.join(tmpdir(), 'chronomap-backup-src-'));
  const seed = await runCli(['seed-demo'], { DATABASE_URL: source.url, CHRONOMAP_DATA_DIR: sourceDir });
  t.equal(seed.code, 0, seed.stderr);
  const upload = path.join(sourceDir, 'ingest', 'uploads', 'kept.csv');
  mkdirSync(path.dirname(upload), { recursive: true });
  writeFileSync(upload, 'when,what\n2024-01-01,Köln "quoted"\n');

  const backupDir = path.join(mkdtempSync(path.join(tmpdir(), 'chronomap-backup-')), 'saved');
  const backup = await runCli(['backup', '--out', backupDir], {
    DATABASE_URL: source.url,
    CHRONOMAP_DATA_DIR: sourceDir,
  });
  t.equal(backup.code, 0, backup.stderr);
  t.match(backup.stdout, /1943 events/);
  const manifest = JSON.parse(readFileSync(path.join(backupDir, 'manifest.json'), 'utf8'));
  t.equal(manifest.events, 1943);
  t.equal(manifest.files, true);

  const again = await runCli(['backup', '--out', backupDir], {
    DATABASE_URL: source.url,
    CHRONOMAP_DATA_DIR: sourceDir,
  });
  t.equal(again.code, 1, 'a backup never writes into a folder that holds one');
  t.match(again.stderr, /exists and is not empty/);

  const server = loadTestServer();
  const targetName = `${source.name}_restored`;
  assertTestDatabaseName(targetName);
  await adminQuery(server.adminUrl, `create database ${targetName}`);
  t.teardown(() => adminQuery(server.adminUrl, `drop database if exists ${targetName} with (force)`));
  const targetUrl = withDatabase(server.adminUrl, targetName);
  const targetDir = mkdtempSync(path.join(tmpdir(), 'chronomap-backup-dst-'));
  const env = { DATABASE_URL: targetUrl, CHRONOMAP_DATA_DIR: targetDir };

  const restore = await runCli(['restore', '--from', backupDir], env);
  t.equal(restore.code, 0, restore.stderr);
  t.equal(await scalar(targetUrl, 'select count(*) from events'), '1943');
  t.equal(
    await scalar(targetUrl, `select count(*) from datasets where slug = 'usgs-earthquakes'`),
    '1',
    'the dataset came along',
  );
  t.equal(
    readFileSync(path.join(targetDir, 'ingest', 'uploads', 'kept.csv'), 'utf8'),
    readFileSync(upload, 'utf8'),
    'uploaded files restored byte for byte',
  );
  const migrate = await runCli(['migrate'], env);
  t.match(migrate.stdout, /database is up to date/, 'the restored database is at this version');

  const refused = await runCli(['restore', '--from', backupDir], env);
  t.equal(refused.code, 1, 'a database holding data is not overwritten by accident');
  t.match(refused.stderr, /already holds Chronomap tables/);
  t.equal(await scalar(targetUrl, 'select count(*) from events'), '1943', 'and is left as it was');

  await scalar(targetUrl, `delete from events where id in (select id from events limit 10) returning 1`);
  const replaced = await runCli(['restore', '--from', backupDir, '--replace'], env);
  t.equal(replaced.code, 0, replaced.stderr);
  t.equal(await scalar(targetUrl, 'select count(*) from events'), '1943', '--replace restores the backup');

  const notABackup = await runCli(['restore', '--from', targetDir], env);
  t.equal(notABackup.code, 1);
  t.match(notABackup.stderr, /is not a chronomap backup/);
});

t.test(
  'the embedded cluster: durable by default, and an old cluster is restarted with fsync and synchronous_commit on',
  async (t) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-durable-'));
    chmodSync(dataDir, 0o755); // as root the cluster runs as the postgres user, which must reach it
    const clusterDir = path.join(dataDir, 'postgres');
    const logged: string[] = [];
    const disposable = await ensureEmbeddedCluster({ dataDir: clusterDir, durability: 'disposable' });
    t.teardown(() => disposable.stop().catch(() => {}));
    t.equal(
      await scalar(disposable.url('postgres'), 'show fsync'),
      'off',
      'test and bench clusters: fsync off',
    );

    const durable = await ensureEmbeddedCluster({ dataDir: clusterDir, log: (line) => logged.push(line) });
    t.equal(await scalar(durable.url('postgres'), 'show fsync'), 'on', 'the running cluster was restarted');
    t.equal(
      await scalar(durable.url('postgres'), 'show synchronous_commit'),
      'on',
      'an acknowledged commit is on the disk (issue 32)',
    );
    t.match(
      logged.join('\n'),
      /runs with fsync=off \(wanted on\), synchronous_commit=off \(wanted on\): restarting it/,
    );

    logged.length = 0;
    await ensureEmbeddedCluster({ dataDir: clusterDir, log: (line) => logged.push(line) });
    t.same(logged, [], 'a cluster already running with these settings is left alone');
  },
);
