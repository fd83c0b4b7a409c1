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
 * `durable` is for data people keep (`chronomap start` on the embedded default): fsync and
 * synchronous_commit on, so a commit the client saw acknowledged (an upload's 201, an import's
 * batch) survives a crash of the machine, and the cluster is never corrupted. `disposable` is for
 * test and benchmark clusters that are rebuilt at will: fsync and synchronous_commit off (a crash
 * may lose or corrupt them; nothing there is kept).
 */
export type Durability = 'durable' | 'disposable';

/**
 * Server settings of the embedded cluster (given on the command line, so they apply to a cluster
 * made by an earlier version too). The write path of `events` (nine indexes, ~750 MB at 1M events)
 * thrashes PostgreSQL's default 128 MB of shared buffers, and with the default 1 GB of WAL between
 * checkpoints a checkpoint runs inside every large import, after which each page touched again is
 * written to the WAL whole: a 100,000-row insert into a 1M-event table wrote 1.7 GB of WAL (280,000
 * full-page images) with the defaults, 116 MB with 2 GB of buffers and 8 GB of WAL. Shared buffers
 * take a quarter of the machine's memory (PostgreSQL's own advice for a dedicated server) between
 * 128 MB and 2 GB, since this cluster shares the machine with the service. synchronous_commit is
 * on for a durable cluster: a commit returns once its WAL is on the disk (issue 32: with it off, a
 * crash lost up to ~600 ms of acknowledged commits, 201s of uploads included); the cost is measured
 * in docs/performance.md, "Durable embedded default". Statements that can afford to lose their last
 * commits turn it off for their own transaction (the rate-limit counters).
 */
export function embeddedServerSettings(
  totalMemoryBytes = os.totalmem(),
  durability: Durability = 'durable',
): Record<string, string> {
  const mb = Math.floor(totalMemoryBytes / 4 / 1024 / 1024);
  return {
    max_connections: '200',
    fsync: durability === 'durable' ? 'on' : 'off',
    synchronous_commit: durability === 'durable' ? 'on' : 'off',
    shared_buffers: `${Math.min(2048, Math.max(128, mb))}MB`,
    max_wal_size: '8GB',
    checkpoint_timeout: '30min',
    wal_compression: 'pglz', // what `on` means; named so the running cluster's setting compares equal
  };
}

export async function ensureEmbeddedCluster(options: {
  dataDir: string;
  log?: (line: string) => void;
  /** Default `durable`; tests and benchmarks pass `disposable`. */
  durability?: Durability;
}): Promise<EmbeddedCluster> {
  const log = options.log ?? (() => {});
  const settings = embeddedServerSettings(os.totalmem(), options.durability ?? 'durable');
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

  const serverOptions = [
    `-k ${socketDir} -c listen_addresses=`,
    ...Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`),
  ].join(' ');
  const logFile = path.join(dataDir, 'server.log');
  if (!(await isRunning(bin, dataDir, owner))) {
    log(`starting embedded PostgreSQL (socket in ${socketDir})`);
    await run(
      path.join(bin, 'pg_ctl'),
      ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', serverOptions],
      owner,
    );
  } else {
    // A cluster started by an earlier version keeps its command-line settings until it restarts:
    // restart it rather than silently run with the old ones (for example fsync=off).
    const differing = settingsThatDiffer(settings, await runningSettings(socketDir, Object.keys(settings)));
    if (differing.length > 0) {
      log(
        `embedded PostgreSQL runs with ${differing.join(', ')}: restarting it with this version's settings`,
      );
      await run(
        path.join(bin, 'pg_ctl'),
        ['restart', '-w', '-t', '60', '-m', 'fast', '-D', dataDir, '-l', logFile, '-o', serverOptions],
        owner,
      );
    }
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

/** What `chronomap stop` did (stopEmbeddedCluster). */
type ClusterStop =
  { outcome: 'stopped' } | { outcome: 'not-running' } | { outcome: 'in-use'; users: string[] };

/**
 * Stops the embedded cluster under `dataDir` (`chronomap stop`), unless a service process still
 * uses it: every service process (start, api, worker) holds connections named `chronomap-<role>`
 * (its job queue's), and their names are returned instead, nothing stopped. `force` stops it anyway
 * (those processes then lose their database and retry until it is back).
 */
export async function stopEmbeddedCluster(options: {
  dataDir: string;
  force?: boolean;
}): Promise<ClusterStop> {
  const dataDir = path.resolve(options.dataDir);
  const bin = postgresBinDir();
  const owner = process.getuid?.() === 0 ? systemUser('postgres') : undefined;
  if (!existsSync(path.join(dataDir, 'PG_VERSION')) || !(await isRunning(bin, dataDir, owner)))
    return { outcome: 'not-running' };
  if (!options.force) {
    const users = await serviceUsers(`${dataDir}-run`);
    if (users.length > 0) return { outcome: 'in-use', users };
  }
  await run(path.join(bin, 'pg_ctl'), ['stop', '-w', '-m', 'fast', '-D', dataDir], owner);
  return { outcome: 'stopped' };
}

/** The service connections of the cluster, as `application_name (pid)`. */
async function serviceUsers(socketDir: string): Promise<string[]> {
  const client = new pg.Client({ host: socketDir, user: SUPERUSER, database: 'postgres' });
  await client.connect();
  try {
    const result = await client.query<{ name: string; pid: number }>(
      `select application_name as name, pid from pg_stat_activity
       where application_name like 'chronomap-%' and pid <> pg_backend_pid() order by pid`,
    );
    return result.rows.map((row) => `${row.name} (backend ${row.pid})`);
  } finally {
    await client.end();
  }
}

/** Each wanted setting the server does not have, as `name=actual (wanted value)`. */
export function settingsThatDiffer(
  wanted: Record<string, string>,
  actual: Record<string, { setting: string; unit: string | null }>,
): string[] {
  return Object.entries(wanted).flatMap(([name, value]) => {
    const found = actual[name];
    if (!found) return [`${name}=unknown (wanted ${value})`];
    return normalisedSetting(value, found.unit) === found.setting
      ? []
      : [`${name}=${found.setting}${found.unit ? `×${found.unit}` : ''} (wanted ${value})`];
  });
}

const UNIT_BYTES: Record<string, number> = { B: 1, kB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** A setting as written in our code (`2048MB`, `30min`, `on`) in pg_settings' form for `unit`. */
function normalisedSetting(value: string, unit: string | null): string {
  const match = /^(\d+)\s*([a-zA-Z]+)?$/.exec(value);
  if (!unit || !match) return value;
  const [, amount = '0', given] = match;
  const unitMatch = /^(\d*)(\w+)$/.exec(unit);
  const unitCount = Number(unitMatch?.[1] || 1);
  const unitName = unitMatch?.[2] ?? unit;
  const scale = unitName in UNIT_BYTES ? UNIT_BYTES : UNIT_MS;
  const givenFactor = scale[given ?? unitName] ?? 1;
  return String(Math.round((Number(amount) * givenFactor) / ((scale[unitName] ?? 1) * unitCount)));
}

async function runningSettings(
  socketDir: string,
  names: string[],
): Promise<Record<string, { setting: string; unit: string | null }>> {
  const client = new pg.Client({ host: socketDir, user: SUPERUSER, database: 'postgres' });
  await client.connect();
  try {
    const result = await client.query<{ name: string; setting: string; unit: string | null }>(
      'select name, setting, unit from pg_settings where name = any($1)',
      [names],
    );
    return Object.fromEntries(result.rows.map((row) => [row.name, row]));
  } finally {
    await client.end();
  }
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

export function postgresBinDir(): string {
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
