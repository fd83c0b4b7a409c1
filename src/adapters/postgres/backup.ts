import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { postgresBinDir } from './embedded-cluster.ts';

// `chronomap backup` and `chronomap restore`: the whole database (pg_dump's custom format, which
// pg_restore reads selectively and in parallel) and the uploaded and fetched files, in one folder,
// so a user of the embedded default can move to a server of their own (or the other way).
//
//   <folder>/manifest.json   what was saved, from where and when (the URL without its password)
//   <folder>/database.dump   pg_dump --format=custom of the whole database (PostGIS, pg-boss included)
//   <folder>/files.tar       the data directory's `ingest` folder (uploads, fetched files)

type BackupManifest = {
  format: 'chronomap-backup/1';
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

export async function backupDatabase(options: {
  databaseUrl: string;
  /** The data directory whose `ingest` folder holds the uploaded and fetched files. */
  dataDir: string;
  outDir: string;
  version: string;
  redactedUrl: string;
}): Promise<BackupManifest> {
  if (existsSync(options.outDir) && readdirSync(options.outDir).length > 0)
    throw new BackupError(`${options.outDir} exists and is not empty: choose a new folder`);
  mkdirSync(options.outDir, { recursive: true });
  const { migrations, events } = await describeDatabase(options.databaseUrl);
  await run(path.join(postgresBinDir(), 'pg_dump'), [
    '--format=custom',
    '--no-owner',
    '--file',
    path.join(options.outDir, 'database.dump'),
    '--dbname',
    options.databaseUrl,
  ]);
  const hasFiles = existsSync(path.join(options.dataDir, 'ingest'));
  if (hasFiles)
    await run('tar', ['-C', options.dataDir, '-cf', path.join(options.outDir, 'files.tar'), 'ingest']);
  const manifest: BackupManifest = {
    format: 'chronomap-backup/1',
    createdAt: new Date().toISOString(),
    chronomapVersion: options.version,
    database: options.redactedUrl,
    migrations,
    events,
    files: hasFiles,
  };
  writeFileSync(path.join(options.outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * Restores a backup into an empty database (one without Chronomap's tables), then the files into the
 * data directory. A database that already holds Chronomap's tables is refused unless `replace` is
 * set, so a mistyped DATABASE_URL cannot overwrite someone's data.
 */
export async function restoreDatabase(options: {
  databaseUrl: string;
  dataDir: string;
  fromDir: string;
  replace: boolean;
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
  await run(path.join(postgresBinDir(), 'pg_restore'), [
    '--no-owner',
    '--exit-on-error',
    '--single-transaction',
    '--dbname',
    options.databaseUrl,
    path.join(options.fromDir, 'database.dump'),
  ]);
  if (manifest.files) {
    mkdirSync(options.dataDir, { recursive: true });
    await run('tar', ['-C', options.dataDir, '-xf', path.join(options.fromDir, 'files.tar')]);
  }
  return manifest;
}

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
  if (!existsSync(file) || !existsSync(path.join(dir, 'database.dump')))
    throw new BackupError(`${dir} is not a chronomap backup (manifest.json and database.dump expected)`);
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as BackupManifest;
  if (manifest.format !== 'chronomap-backup/1')
    throw new BackupError(`${file}: unknown backup format "${String(manifest.format)}"`);
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
