import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { runCli } from '../../helpers/cli.ts';
import { startBackRestLab } from '../../helpers/pgbackrest.ts';
import { scalar } from '../../helpers/replication.ts';

// pgBackRest for a deployment that runs its own PostgreSQL host (docs/operations.md, "Backups with
// pgBackRest"), on a cluster this test starts with WAL archiving into a repository of its own:
// a full backup after import A, an incremental one after import B, then a point-in-time restore to
// a moment between the imports (A's events and not B's) and a restore of the latest state (both).
// The imports go through `chronomap seed-demo --file`: the ingestion pipeline's CSV reader, row
// rules and event store (not the HTTP upload and its jobs).

const HEADER = 'time,latitude,longitude,place,id';
function importFile(dir: string, name: string, rows: number): string {
  const file = path.join(dir, `${name}.csv`);
  const lines = Array.from(
    { length: rows },
    (_, row) =>
      `2024-0${row + 1}-01T00:00:00Z,${50 + row},${7 + row},import ${name} row ${row},${name}-${row}`,
  );
  writeFileSync(file, `${HEADER}\n${lines.join('\n')}\n`);
  return file;
}

const uniqueIds = (url: string) =>
  scalar(url, `select string_agg(unique_id, ',' order by unique_id) from events`);

t.test(
  'full and incremental backups; a point-in-time restore has the first import and not the second',
  async (t) => {
    const lab = await startBackRestLab();
    t.teardown(() => lab.remove());
    await scalar(lab.url('primary', 'postgres'), 'create database chronomap');
    const env = { DATABASE_URL: lab.url('primary', 'chronomap') };
    const migrate = await runCli(['migrate'], env);
    t.equal(migrate.code, 0, migrate.stderr);

    const importA = await runCli(['seed-demo', '--file', importFile(lab.dir, 'a', 3)], env);
    t.match(importA.stdout, /stored 3 new events/, importA.stderr);
    await lab.pgbackrest('backup', '--type=full');
    // The moment between the imports, by the server's clock, and a named restore point there.
    const between = await scalar(
      env.DATABASE_URL,
      `select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') || '+00'`,
    );
    await scalar(env.DATABASE_URL, `select pg_create_restore_point('before-import-b')`);
    const importB = await runCli(['seed-demo', '--file', importFile(lab.dir, 'b', 2)], env);
    t.match(importB.stdout, /stored 2 new events/, importB.stderr);
    await lab.pgbackrest('backup', '--type=incr');

    const info = JSON.parse(await lab.pgbackrest('info', '--output=json')) as {
      backup: { label: string; type: string }[];
    }[];
    const backups = info[0]?.backup ?? [];
    t.same(
      backups.map((backup) => backup.type),
      ['full', 'incr'],
      'the repository holds a full backup and an incremental one on it',
    );

    // Restore to the time between the imports from the full backup's set (pgBackRest's own choice
    // compares whole seconds, so a target less than a second after a backup needs the set named),
    // with two processes, into a new data directory.
    lab.emptyDataDir('pitr');
    await lab.pgbackrest(
      'restore',
      `--pg1-path=${path.join(lab.dir, 'pitr')}`,
      `--set=${backups[0]?.label}`,
      '--type=time',
      `--target=${between}`,
      '--target-action=promote',
      '--process-max=2',
    );
    await lab.start('pitr', ['-c archive_mode=off']);
    t.equal(await uniqueIds(lab.url('pitr', 'chronomap')), 'a-0,a-1,a-2', 'at that time: import A, not B');

    // The named restore point, from the full backup's set.
    lab.emptyDataDir('named');
    await lab.pgbackrest(
      'restore',
      `--pg1-path=${path.join(lab.dir, 'named')}`,
      `--set=${backups[0]?.label}`,
      '--type=name',
      '--target=before-import-b',
      '--target-action=promote',
    );
    await lab.start('named', ['-c archive_mode=off']);
    t.equal(await uniqueIds(lab.url('named', 'chronomap')), 'a-0,a-1,a-2', 'at the restore point: A, not B');

    // The latest state: the incremental backup on its full one, then the archived WAL to its end.
    lab.emptyDataDir('latest');
    await lab.pgbackrest('restore', `--pg1-path=${path.join(lab.dir, 'latest')}`, '--process-max=2');
    await lab.start('latest', ['-c archive_mode=off']);
    t.equal(await uniqueIds(lab.url('latest', 'chronomap')), 'a-0,a-1,a-2,b-0,b-1', 'both imports');
    const migrated = await runCli(['migrate'], { DATABASE_URL: lab.url('latest', 'chronomap') });
    t.match(migrated.stdout, /database is up to date/, 'the restored database is at this version');
  },
);
