import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../config/environment.ts';

// Plain-SQL migrations, applied in file-name order, each in its own transaction, under an advisory
// lock so that several processes starting at once apply each file exactly once. A checksum per file
// catches an applied migration that was edited afterwards.

export type Migration = { name: string; sql: string; checksum: string };

export const MIGRATIONS_TABLE = 'chronomap_migrations';
const LOCK_KEY = 727_274_001; // any constant shared by every Chronomap process

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

export function loadMigrations(directory = path.join(projectRoot, 'migrations')): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_-]+\.sql$/.test(file))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(directory, name), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

type Queryable = Pick<pg.ClientBase, 'query'>;

/** Applies every pending migration; returns the names applied. */
export async function migrate(
  connectionString: string,
  migrations: Migration[] = loadMigrations(),
  log: (line: string) => void = () => {},
): Promise<string[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`create table if not exists ${MIGRATIONS_TABLE} (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    const applied = await appliedChecksums(client);
    verifyChecksums(applied, migrations);
    const done: string[] = [];
    for (const migration of migrations.filter((m) => !applied.has(m.name))) {
      log(`applying migration ${migration.name}`);
      await client.query('begin');
      try {
        await client.query(migration.sql);
        await client.query(`insert into ${MIGRATIONS_TABLE} (name, checksum) values ($1, $2)`, [
          migration.name,
          migration.checksum,
        ]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new MigrationError(
          `migration ${migration.name} failed and was rolled back: ${(error as Error).message}`,
          { cause: error },
        );
      }
      done.push(migration.name);
    }
    return done;
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    await client.end();
  }
}

/** Pending migration names, given the recorded name -> checksum map; throws on an edited migration. */
export function diffMigrations(applied: Map<string, string>, migrations: Migration[]): string[] {
  verifyChecksums(applied, migrations);
  return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
}

async function appliedChecksums(db: Queryable): Promise<Map<string, string>> {
  const result = await db.query<{ name: string; checksum: string }>(
    `select name, checksum from ${MIGRATIONS_TABLE}`,
  );
  return new Map(result.rows.map((row) => [row.name, row.checksum]));
}

function verifyChecksums(applied: Map<string, string>, migrations: Migration[]): void {
  for (const migration of migrations) {
    const recorded = applied.get(migration.name);
    if (recorded && recorded !== migration.checksum) {
      throw new MigrationError(
        `migration ${migration.name} was changed after it was applied (checksum differs); ` +
          'add a new migration instead of editing an applied one',
      );
    }
  }
}
