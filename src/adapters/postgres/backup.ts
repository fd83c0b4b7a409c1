import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import pg from 'pg';

// `chronomap backup` and `chronomap restore`: the whole database and the uploaded and fetched
// files, in one folder, so a user of the embedded default can move to a server of their own (or
// the other way). Deployments that run their own PostgreSQL host use pgBackRest instead
// (docs/operations.md, "Backups with pgBackRest"): incremental backups and point-in-time recovery.
//
//   <folder>/manifest.json   what was saved, from where and when (the URL without its password)
//   <folder>/database/       pg_dump --format=directory of the whole database (PostGIS, pg-boss
//                            included), dumped and restored by several processes (--jobs)
//   <folder>/files.tar       the files of the data directory's `ingest` folder, read at its real
//                            path (a shared volume mounted there by a symlink is archived, not the link)
//
// Everything is readable by its owner only: the dump holds password hashes and sessions.
// Format 1 (database.dump, pg_dump's custom format; files.tar holding `ingest/...`) is still restored.

type BackupManifest = {
  format: 'chronomap-backup/1' | 'chronomap-backup/2';
  createdAt: string;
  chronomapVersion: string;
  database: string;
  migrations: number;
  events: number;
  files: boolean;
};

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/** Processes pg_dump and pg_restore use unless told otherwise: the cores, at most four. */
export function defaultJobs(): number {
  return Math.min(4, availableParallelism());
}

export async function backupDatabase(options: {
  databaseUrl: string;
  /** The data directory whose `ingest` folder holds the uploaded and fetched files. */
  dataDir: string;
  outDir: string;
  version: string;
  redactedUrl: string;
  jobs: number;
}): Promise<BackupManifest> {
  if (existsSync(options.outDir) && readdirSync(options.outDir).length > 0)
    throw new BackupError(`${options.outDir} exists and is not empty: choose a new folder`);
  const ingest = ingestRoot(options.dataDir);
  mkdirSync(options.outDir, { recursive: true, mode: 0o700 });
  chmodSync(options.outDir, 0o700);
  const { migrations, events } = await describeDatabase(options.databaseUrl);
  await run(path.join(clientBinDir(), 'pg_dump'), [
    '--format=directory',
    `--jobs=${options.jobs}`,
    '--no-owner',
    '--file',
    path.join(options.outDir, 'database'),
    '--dbname',
    options.databaseUrl,
  ]);
  // --dereference: the links inside were checked to stay inside, so each is archived as its file.
  if (ingest)
    await run('tar', ['-C', ingest, '--dereference', '-cf', path.join(options.outDir, 'files.tar'), '.']);
  const manifest: BackupManifest = {
    format: 'chronomap-backup/2',
    createdAt: new Date().toISOString(),
    chronomapVersion: options.version,
    database: options.redactedUrl,
    migrations,
    events,
    files: ingest !== null,
  };
  writeFileSync(path.join(options.outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  ownerOnly(options.outDir);
  return manifest;
}

/**
 * The real path of the data directory's `ingest` folder (it may be a symlink to a shared volume),
 * or null when there is none. A symlink inside it that leads outside it (or nowhere) is refused:
 * the backup would otherwise carry files that are not the service's, or miss the ones it names.
 */
function ingestRoot(dataDir: string): string | null {
  const link = path.join(dataDir, 'ingest');
  if (!existsSync(link)) return null;
  const root = realpathSync(link);
  if (!lstatSync(root).isDirectory()) throw new BackupError(`${link} is not a folder`);
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isSymbolicLink()) continue;
    const found = path.join(entry.parentPath, entry.name);
    const target = existsSync(found) ? realpathSync(found) : null;
    if (target === null || (target !== root && !target.startsWith(`${root}${path.sep}`)))
      throw new BackupError(
        `${found} is a symlink to ${target ?? 'nothing'}, outside ${link}: refusing to archive it ` +
          '(move the file into the ingest folder or remove the link)',
      );
  }
  return root;
}

/** Every file of the backup 0600 and every folder 0700, whatever the umask was. */
function ownerOnly(dir: string): void {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    chmodSync(path.join(entry.parentPath, entry.name), entry.isDirectory() ? 0o700 : 0o600);
}

/**
 * Where pg_dump and pg_restore are: PG_BINDIR, else the newest Debian PostgreSQL that has them
 * (the client package alone is enough: the service image ships no server), else the PATH.
 */
function clientBinDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const debianRoot = '/usr/lib/postgresql';
  const versions = existsSync(debianRoot)
    ? readdirSync(debianRoot)
        .filter((name) => existsSync(path.join(debianRoot, name, 'bin', 'pg_restore')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0]) return path.join(debianRoot, versions[0], 'bin');
  const onPath = (process.env.PATH ?? '')
    .split(path.delimiter)
    .find((dir) => dir && existsSync(path.join(dir, 'pg_restore')));
  if (onPath) return onPath;
  throw new BackupError('pg_dump and pg_restore not found: install postgresql-client, or set PG_BINDIR');
}

/**
 * Restores a backup into an empty database (one without Chronomap's tables), then the files into the
 * data directory. A database that already holds Chronomap's tables is refused unless `replace` is
 * set, so a mistyped DATABASE_URL cannot overwrite someone's data. pg_restore runs `jobs` processes
 * (no single transaction then): a restore that fails empties the database again.
 */
export async function restoreDatabase(options: {
  databaseUrl: string;
  dataDir: string;
  fromDir: string;
  replace: boolean;
  jobs: number;
}): Promise<BackupManifest> {
  const manifest = readManifest(options.fromDir);
  const holdsData = await hasChronomapTables(options.databaseUrl);
  if (holdsData && !options.replace)
    throw new BackupError(
      'the target database already holds Chronomap tables: restore into an empty database, or pass ' +
        '--replace to drop and replace what is there',
    );
  // pg_restore --clean cannot drop pg-boss's partitioned tables (it drops the partitions' inherited
  // constraints first, which PostgreSQL refuses), so replacing starts from an emptied database.
  if (holdsData) await withClient(options.databaseUrl, emptyDatabase);
  const dump = path.join(options.fromDir, dumpName(manifest));
  try {
    await run(path.join(clientBinDir(), 'pg_restore'), [
      '--no-owner',
      '--exit-on-error',
      `--jobs=${options.jobs}`,
      '--dbname',
      options.databaseUrl,
      dump,
    ]);
  } catch (error) {
    await withClient(options.databaseUrl, emptyDatabase);
    throw error;
  }
  if (manifest.files) {
    // Format 1 archived the `ingest` folder itself, format 2 its contents.
    const into =
      manifest.format === 'chronomap-backup/1' ? options.dataDir : path.join(options.dataDir, 'ingest');
    mkdirSync(into, { recursive: true });
    await run('tar', ['-C', into, '-xf', path.join(options.fromDir, 'files.tar')]);
  }
  return manifest;
}

const dumpName = (manifest: BackupManifest) =>
  manifest.format === 'chronomap-backup/1' ? 'database.dump' : 'database';

/** Drops every schema and extension of the database, then gives it back an empty `public`. */
async function emptyDatabase(client: pg.Client): Promise<void> {
  const schemas = await client.query<{ name: string }>(
    `select nspname as name from pg_namespace
      where nspname not in ('pg_catalog', 'information_schema') and nspname not like 'pg\\_%'`,
  );
  const extensions = await client.query<{ name: string }>(
    `select extname as name from pg_extension where extname <> 'plpgsql'`,
  );
  await client.query('begin');
  for (const { name } of extensions.rows)
    await client.query(`drop extension if exists ${pg.escapeIdentifier(name)} cascade`);
  for (const { name } of schemas.rows)
    await client.query(`drop schema if exists ${pg.escapeIdentifier(name)} cascade`);
  await client.query('create schema public');
  await client.query('commit');
}

function readManifest(dir: string): BackupManifest {
  const file = path.join(dir, 'manifest.json');
  if (!existsSync(file))
    throw new BackupError(`${dir} is not a chronomap backup (manifest.json and database/ expected)`);
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as BackupManifest;
  if (manifest.format !== 'chronomap-backup/1' && manifest.format !== 'chronomap-backup/2')
    throw new BackupError(`${file}: unknown backup format "${String(manifest.format)}"`);
  if (!existsSync(path.join(dir, dumpName(manifest))))
    throw new BackupError(`${dir} is not a complete chronomap backup: ${dumpName(manifest)} is missing`);
  return manifest;
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function hasChronomapTables(url: string): Promise<boolean> {
  return withClient(url, hasChronomapTablesOn);
}

function describeDatabase(url: string): Promise<{ migrations: number; events: number }> {
  return withClient(url, async (client) => {
    if (!(await hasChronomapTablesOn(client)))
      throw new BackupError('the database holds no Chronomap tables: nothing to back up');
    const counts = await client.query<{ migrations: string; events: string }>(
      'select (select count(*) from chronomap_migrations) as migrations, (select count(*) from events) as events',
    );
    return { migrations: Number(counts.rows[0]?.migrations), events: Number(counts.rows[0]?.events) };
  });
}

async function hasChronomapTablesOn(client: pg.Client): Promise<boolean> {
  const found = await client.query(`select to_regclass('public.chronomap_migrations') is not null as found`);
  return Boolean(found.rows[0]?.found);
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new BackupError(`${path.basename(command)} failed (exit ${code}): ${stderr.trim()}`)),
    );
  });
}
