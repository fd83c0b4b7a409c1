import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

// A private PostgreSQL cluster for development and tests, made with the system's PostgreSQL
// binaries. It listens on a Unix socket only (no TCP port to clash with or expose) and is reused
// across runs. PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres`
// system user that Debian's packages create.

export type EmbeddedCluster = {
  dataDir: string;
  socketDir: string;
  /** libpq/pg connection string for a database of this cluster. */
  url(database: string): string;
  stop(): Promise<void>;
};

const SUPERUSER = 'postgres';

/**
 * Server settings of the embedded cluster (given on the command line, so they apply to a cluster
 * made by an earlier version too). The write path of `events` (nine indexes, ~750 MB at 1M events)
 * thrashes PostgreSQL's default 128 MB of shared buffers, and with the default 1 GB of WAL between
 * checkpoints a checkpoint runs inside every large import, after which each page touched again is
 * written to the WAL whole: a 100,000-row insert into a 1M-event table wrote 1.7 GB of WAL (280,000
 * full-page images) with the defaults, 116 MB with 2 GB of buffers and 8 GB of WAL. Shared buffers
 * take a quarter of the machine's memory (PostgreSQL's own advice for a dedicated server) between
 * 128 MB and 2 GB, since this cluster shares the machine with the service. fsync and synchronous
 * commit are off because the cluster is for development and tests (see docs/ingestion.md for an
 * external server).
 */
export function embeddedServerSettings(totalMemoryBytes = os.totalmem()): Record<string, string> {
  const mb = Math.floor(totalMemoryBytes / 4 / 1024 / 1024);
  return {
    max_connections: '200',
    fsync: 'off',
    synchronous_commit: 'off',
    shared_buffers: `${Math.min(2048, Math.max(128, mb))}MB`,
    max_wal_size: '8GB',
    checkpoint_timeout: '30min',
    wal_compression: 'on',
  };
}

export async function ensureEmbeddedCluster(options: {
  dataDir: string;
  log?: (line: string) => void;
}): Promise<EmbeddedCluster> {
  const log = options.log ?? (() => {});
  const dataDir = path.resolve(options.dataDir);
  const socketDir = `${dataDir}-run`;
  const bin = postgresBinDir();
  const owner = process.getuid?.() === 0 ? systemUser('postgres') : undefined;

  for (const dir of [path.dirname(dataDir), socketDir]) mkdirSync(dir, { recursive: true });
  if (owner) assertReachableBy(owner, path.dirname(dataDir));
  if (owner) chownSync(socketDir, owner.uid, owner.gid);
  chmodSync(socketDir, 0o700);

  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    log(`creating embedded PostgreSQL cluster in ${dataDir}`);
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    if (owner) chownSync(dataDir, owner.uid, owner.gid);
    await run(
      path.join(bin, 'initdb'),
      ['-D', dataDir, '-U', SUPERUSER, '--auth=trust', '-E', 'UTF8', '--locale=C'],
      owner,
    );
  }

  if (!(await isRunning(bin, dataDir, owner))) {
    log(`starting embedded PostgreSQL (socket in ${socketDir})`);
    await run(
      path.join(bin, 'pg_ctl'),
      [
        'start',
        '-w',
        '-t',
        '60',
        '-D',
        dataDir,
        '-l',
        path.join(dataDir, 'server.log'),
        '-o',
        [
          `-k ${socketDir} -c listen_addresses=`,
          ...Object.entries(embeddedServerSettings()).map(([name, value]) => `-c ${name}=${value}`),
        ].join(' '),
      ],
      owner,
    );
  }

  const cluster: EmbeddedCluster = {
    dataDir,
    socketDir,
    // The socket directory goes percent-encoded in the host part, which both pg and Slonik understand.
    url: (database) =>
      `postgresql://${SUPERUSER}@${encodeURIComponent(socketDir)}/${encodeURIComponent(database)}`,
    stop: () => run(path.join(bin, 'pg_ctl'), ['stop', '-w', '-m', 'fast', '-D', dataDir], owner),
  };
  return cluster;
}

export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`create database ${pg.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

function postgresBinDir(): string {
  const fromEnv = process.env.PG_BINDIR;
  if (fromEnv) return fromEnv;
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const versions = readdirSync(debianRoot)
      .filter((name) => existsSync(path.join(debianRoot, name, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return path.join(debianRoot, versions[0], 'bin');
  }
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'PostgreSQL server binaries not found: install postgresql and postgresql-15-postgis-3 (see README), ' +
        'set PG_BINDIR, or set DATABASE_URL to use an existing server.',
    );
  }
}

function systemUser(name: string): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`));
  if (!line) throw new Error(`running as root needs the "${name}" system user to own the embedded cluster`);
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** As root the cluster runs as `postgres`, which must be able to reach the data directory. */
function assertReachableBy(owner: { uid: number; gid: number }, dir: string): void {
  try {
    execFileSync('test', ['-x', dir], { uid: owner.uid, gid: owner.gid, stdio: 'ignore' });
  } catch {
    throw new Error(
      `the postgres system user cannot reach ${dir} (PostgreSQL refuses to run as root, so the embedded ` +
        'cluster runs as postgres): make the path traversable (chmod o+x on each parent), set ' +
        'CHRONOMAP_DATA_DIR elsewhere, or set DATABASE_URL',
    );
  }
}

async function isRunning(
  bin: string,
  dataDir: string,
  owner?: { uid: number; gid: number },
): Promise<boolean> {
  try {
    await run(path.join(bin, 'pg_ctl'), ['status', '-D', dataDir], owner);
    return true;
  } catch {
    return false;
  }
}

function run(command: string, args: string[], owner?: { uid: number; gid: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: '/',
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} ${args[0]} failed (exit ${code}): ${output.trim()}`));
    });
  });
}
