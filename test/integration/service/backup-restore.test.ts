import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
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

/** Every file and folder under `dir` with its permission bits other than the owner's. */
function readableByOthers(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => path.join(entry.parentPath, entry.name))
    .concat(dir)
    .filter((found) => (statSync(found).mode & 0o077) !== 0);
}

t.test('backup, then restore into an empty database: the same events and the same files', async (t) => {
  const source = await testDatabase(t);
  const sourceDir = mkdtempSync(path.join(tmpdir(), 'chronomap-backup-src-'));
  const seed = await runCli(['seed-demo'], { DATABASE_URL: source.url, CHRONOMAP_DATA_DIR: sourceDir });
  t.equal(seed.code, 0, seed.stderr);
  // The ingest folder is a shared volume mounted by a symlink, as the scale-out deployment has it.
  const shared = mkdtempSync(path.join(tmpdir(), 'chronomap-backup-shared-'));
  symlinkSync(shared, path.join(sourceDir, 'ingest'));
  const upload = path.join(sourceDir, 'ingest', 'uploads', 'kept.csv');
  mkdirSync(path.dirname(upload), { recursive: true });
  writeFileSync(upload, 'when,what\n2024-01-01,Köln "quoted"\n');
  // A link inside the volume to another file of it is archived as that file.
  symlinkSync(upload, path.join(shared, 'uploads', 'linked.csv'));

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
  t.equal(manifest.format, 'chronomap-backup/2');
  t.same(readableByOthers(backupDir), [], 'the backup (password hashes, sessions) is for its owner only');
  t.equal(statSync(path.join(backupDir, 'manifest.json')).mode & 0o777, 0o600);

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

  // An export kept for the database before the restore would have the restored data versions' keys.
  mkdirSync(path.join(targetDir, 'exports'), { recursive: true });
  writeFileSync(path.join(targetDir, 'exports', 'kept-before.export'), 'stale');
  const restore = await runCli(['restore', '--from', backupDir], env);
  t.equal(restore.code, 0, restore.stderr);
  t.same(readdirSync(path.join(targetDir, 'exports')), [], 'the exports kept before the restore are gone');
  t.equal(await scalar(targetUrl, 'select count(*) from events'), '1943');
  t.equal(
    await scalar(targetUrl, `select count(*) from datasets where slug = 'usgs-earthquakes'`),
    '1',
    'the dataset came along',
  );
  t.equal(
    readFileSync(path.join(targetDir, 'ingest', 'uploads', 'kept.csv'), 'utf8'),
    readFileSync(upload, 'utf8'),
    'uploaded files restored byte for byte, from the real folder behind the symlink',
  );
  t.ok(
    lstatSync(path.join(targetDir, 'ingest', 'uploads', 'linked.csv')).isFile(),
    'a link inside, as its file',
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

  // A backup of format 1, as the version before wrote it (a custom-format dump, `ingest/` in the
  // tar), still restores.
  const formatOne = mkdtempSync(path.join(tmpdir(), 'chronomap-backup-v1-'));
  execFileSync('pg_dump', [
    '--format=custom',
    '--no-owner',
    '--file',
    path.join(formatOne, 'database.dump'),
    source.url,
  ]);
  const oldFiles = mkdtempSync(path.join(tmpdir(), 'chronomap-backup-v1-files-'));
  mkdirSync(path.join(oldFiles, 'ingest', 'uploads'), { recursive: true });
  writeFileSync(path.join(oldFiles, 'ingest', 'uploads', 'old.csv'), 'when,what\n2020-01-01,old\n');
  execFileSync('tar', ['-C', oldFiles, '-cf', path.join(formatOne, 'files.tar'), 'ingest']);
  writeFileSync(
    path.join(formatOne, 'manifest.json'),
    JSON.stringify({ ...manifest, format: 'chronomap-backup/1' }),
  );
  const fromOne = await runCli(['restore', '--from', formatOne, '--replace', '--jobs', '2'], env);
  t.equal(fromOne.code, 0, fromOne.stderr);
  t.equal(await scalar(targetUrl, 'select count(*) from events'), '1943', 'format 1 restores');
  t.equal(
    readFileSync(path.join(targetDir, 'ingest', 'uploads', 'old.csv'), 'utf8'),
    'when,what\n2020-01-01,old\n',
  );
});

t.test(
  'a symlink in the ingest folder that leads outside it is refused, and nothing is written',
  async (t) => {
    const source = await testDatabase(t);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-backup-escape-'));
    const migrate = await runCli(['migrate'], { DATABASE_URL: source.url, CHRONOMAP_DATA_DIR: dataDir });
    t.equal(migrate.code, 0, migrate.stderr);
    mkdirSync(path.join(dataDir, 'ingest', 'uploads'), { recursive: true });
    symlinkSync('/etc/passwd', path.join(dataDir, 'ingest', 'uploads', 'stolen.csv'));
    const backupDir = path.join(mkdtempSync(path.join(tmpdir(), 'chronomap-backup-')), 'saved');
    const backup = await runCli(['backup', '--out', backupDir], {
      DATABASE_URL: source.url,
      CHRONOMAP_DATA_DIR: dataDir,
    });
    t.equal(backup.code, 1, backup.stdout);
    t.match(backup.stderr, /stolen\.csv is a symlink to \/etc\/passwd, outside .*: refusing to archive it/);
    t.throws(() => statSync(backupDir), 'no backup folder was started');

    const jobs = await runCli(['backup', '--out', backupDir, '--jobs', '0'], {
      DATABASE_URL: source.url,
      CHRONOMAP_DATA_DIR: dataDir,
    });
    t.equal(jobs.code, 1);
    t.match(jobs.stderr, /--jobs must be an integer from 1 to 32/);
  },
);

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
