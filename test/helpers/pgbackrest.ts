import { execFile } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { postgresBinDir } from '../../src/adapters/postgres/embedded-cluster.ts';
import { scalar } from './replication.ts';

// A PostgreSQL cluster of its own with WAL archiving into a pgBackRest repository of its own, all
// in one temporary folder, set up as docs/operations.md ("Backups with pgBackRest") tells an
// operator to: the stanza `chronomap`, archive_command `pgbackrest … archive-push %p`. As root,
// PostgreSQL and pgBackRest run as the `postgres` user (which owns the folder). Unix sockets only,
// fsync off (a test cluster; pgBackRest neither needs nor checks it).

const execFileAsync = promisify(execFile);
export const STANZA = 'chronomap';

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return { uid: Number(uid), gid: Number(gid) };
}

export type BackRestLab = {
  dir: string;
  /** The URL of `database` on the cluster whose data directory is `name` (`primary`, or a restored one). */
  url(name: string, database: string): string;
  /** Runs `pgbackrest --config=… --stanza=chronomap <args>` as the cluster's user; its stdout. */
  pgbackrest(...args: string[]): Promise<string>;
  /** Starts the cluster in `<dir>/<name>` on a socket of its own (archiving off for a restored one). */
  start(name: string, extra?: string[]): Promise<void>;
  /** An empty data directory `<dir>/<name>` for a restore, owned by the cluster's user. */
  emptyDataDir(name: string): string;
  remove(): Promise<void>;
};

export async function startBackRestLab(): Promise<BackRestLab> {
  const owner = postgresUser();
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-pgbackrest-'));
  chmodSync(dir, 0o755);
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const bin = postgresBinDir();
  const config = path.join(dir, 'pgbackrest.conf');
  const asOwner = async (command: string, args: string[]) =>
    (await execFileAsync(command, args, { cwd: '/', ...(owner ?? {}), maxBuffer: 16 * 1024 * 1024 })).stdout;
  const started: string[] = [];
  const socket = (name: string) => path.join(dir, `${name}-run`);

  writeFileSync(
    config,
    [
      '[global]',
      `repo1-path=${path.join(dir, 'repo')}`,
      'repo1-retention-full=2',
      `lock-path=${path.join(dir, 'lock')}`,
      `log-path=${path.join(dir, 'log')}`,
      `spool-path=${path.join(dir, 'spool')}`,
      'log-level-console=warn',
      'log-level-file=off',
      'start-fast=y',
      '',
      `[${STANZA}]`,
      `pg1-path=${path.join(dir, 'primary')}`,
      `pg1-socket-path=${socket('primary')}`,
      '',
    ].join('\n'),
  );
  if (owner) chownSync(config, owner.uid, owner.gid);

  const lab: BackRestLab = {
    dir,
    url: (name, database) => `postgresql://postgres@${encodeURIComponent(socket(name))}/${database}`,
    pgbackrest: (...args) => asOwner('pgbackrest', [`--config=${config}`, `--stanza=${STANZA}`, ...args]),
    async start(name, extra = []) {
      mkdirSync(socket(name), { mode: 0o700 });
      if (owner) chownSync(socket(name), owner.uid, owner.gid);
      const options = [`-k ${socket(name)}`, '-c listen_addresses=', '-c fsync=off', ...extra].join(' ');
      const dataDir = path.join(dir, name);
      await asOwner(path.join(bin, 'pg_ctl'), [
        'start',
        '-w',
        '-t',
        '60',
        '-D',
        dataDir,
        '-l',
        `${dataDir}.log`,
        '-o',
        options,
      ]);
      started.push(dataDir);
      // A restored cluster accepts connections while it still replays WAL: wait for its promotion.
      for (let attempt = 0; attempt < 600; attempt += 1) {
        if ((await scalar(lab.url(name, 'postgres'), 'select pg_is_in_recovery()')) === 'false') return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`${name} was still recovering after 60 s`);
    },
    emptyDataDir(name) {
      const dataDir = path.join(dir, name);
      mkdirSync(dataDir, { mode: 0o700 });
      if (owner) chownSync(dataDir, owner.uid, owner.gid);
      return dataDir;
    },
    async remove() {
      for (const dataDir of started)
        await asOwner(path.join(bin, 'pg_ctl'), ['stop', '-m', 'immediate', '-D', dataDir]).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };

  const primary = lab.emptyDataDir('primary');
  await asOwner(path.join(bin, 'initdb'), [
    '-D',
    primary,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--locale=C',
  ]);
  appendFileSync(
    path.join(primary, 'postgresql.conf'),
    [
      '',
      '# WAL archiving into pgBackRest (docs/operations.md, "Backups with pgBackRest")',
      'wal_level = replica',
      'archive_mode = on',
      `archive_command = 'pgbackrest --config=${config} --stanza=${STANZA} archive-push %p'`,
      'max_wal_senders = 3',
      '',
    ].join('\n'),
  );
  try {
    await lab.start('primary');
    await lab.pgbackrest('stanza-create');
    await lab.pgbackrest('check');
  } catch (error) {
    await lab.remove();
    throw error;
  }
  return lab;
}
