import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../config/environment.ts';
import { concurrentIndexNames, splitStatements } from './migration-statements.ts';
import { LOCK_NOT_AVAILABLE, sqlState } from './sql-state.ts';

// Plain-SQL migrations, applied in file-name order under an advisory lock so that several processes
// starting at once apply each file exactly once. A checksum per file catches an applied migration
// that was edited afterwards. Each file runs in its own transaction, or, with the no-transaction
// marker as its first line, statement by statement (docs/upgrading.md, "Statements that cannot run
// in a transaction"): what CREATE INDEX CONCURRENTLY needs.
//
// Every statement runs under a short lock_timeout: a migration that needs an ACCESS EXCLUSIVE lock
// behind a long reader would otherwise sit in the lock queue, and every reader arriving after it
// would queue behind it. When a lock is not granted in time the attempt is given up (rolled back)
// and retried after a pause, a bounded number of times (docs/upgrading.md, docs/operations.md).

export type Migration = { name: string; sql: string; checksum: string; transactional: boolean };

const NO_TRANSACTION_MARKER = '-- chronomap:no-transaction';

export function loadMigrations(directory = path.join(projectRoot, 'migrations')): Migration[] {
  return readdirSync(directory)
    .filter((file) => /^\d{4}_[a-z0-9_-]+\.sql$/.test(file))
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(directory, name), 'utf8');
      const transactional = sql.split('\n', 1)[0]?.trim() !== NO_TRANSACTION_MARKER;
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex'), transactional };
    });
}

export const MIGRATIONS_TABLE = 'chronomap_migrations';
const LOCK_KEY = 727_274_001; // any constant shared by every Chronomap process
const MAX_RETRY_DELAY_MS = 30_000;

type MigrationLockOptions = {
  /** lock_timeout of every migration statement (MIGRATION_LOCK_TIMEOUT_MS). */
  lockTimeoutMs: number;
  /** Attempts per migration file when a lock is not granted in time (MIGRATION_LOCK_ATTEMPTS). */
  attempts: number;
  /** Pause after the first failed attempt, doubled after each next one, at most 30 s. */
  retryDelayMs: number;
};

const DEFAULT_MIGRATION_LOCKS: MigrationLockOptions = {
  lockTimeoutMs: 2_000,
  attempts: 10,
  retryDelayMs: 1_000,
};

export class MigrationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

type Queryable = Pick<pg.ClientBase, 'query'>;

/** Applies every pending migration; returns the names applied. */
export async function migrate(
  connectionString: string,
  migrations: Migration[],
  log: (line: string) => void = () => {},
  locks: { [K in keyof MigrationLockOptions]?: number | undefined } = {},
): Promise<string[]> {
  const options = { ...DEFAULT_MIGRATION_LOCKS };
  for (const key of Object.keys(options) as (keyof MigrationLockOptions)[])
    options[key] = locks[key] ?? options[key];
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    // Waits as long as another process migrates: lock_timeout is set only once this lock is held.
    await client.query('select pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`create table if not exists ${MIGRATIONS_TABLE} (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    const applied = await appliedChecksums(client);
    verifyChecksums(applied, migrations);
    await client.query(`set lock_timeout = ${Math.trunc(options.lockTimeoutMs)}`);
    const done: string[] = [];
    for (const migration of migrations.filter((m) => !applied.has(m.name))) {
      log(`applying migration ${migration.name}`);
      await withLockRetries(client, migration, options, log);
      done.push(migration.name);
    }
    return done;
  } finally {
    await client.query('select pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => {});
    await client.end();
  }
}

async function withLockRetries(
  client: pg.Client,
  migration: Migration,
  options: MigrationLockOptions,
  log: (line: string) => void,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await (migration.transactional ? applyInTransaction : applyOutsideTransaction)(client, migration);
      return;
    } catch (error) {
      if (sqlState(error) !== LOCK_NOT_AVAILABLE) throw error;
      const holders = await lockHolders(client);
      if (attempt >= options.attempts) {
        throw new MigrationError(
          `migration ${migration.name} was not applied: a lock it needs was not granted within ` +
            `lock_timeout (${options.lockTimeoutMs} ms) in ${attempt} attempt(s); ` +
            `the oldest open transactions: ${holders}. ` +
            'End them or raise MIGRATION_LOCK_TIMEOUT_MS / MIGRATION_LOCK_ATTEMPTS (docs/operations.md)',
          { cause: error },
        );
      }
      const delay = Math.min(options.retryDelayMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS);
      log(
        `migration ${migration.name}: a lock was not granted within ${options.lockTimeoutMs} ms ` +
          `(attempt ${attempt} of ${options.attempts}; held by ${holders}); retrying in ${delay} ms`,
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

async function applyInTransaction(client: pg.Client, migration: Migration): Promise<void> {
  await client.query('begin');
  try {
    await client.query(migration.sql);
    await record(client, migration);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    if (sqlState(error) === LOCK_NOT_AVAILABLE) throw error;
    throw new MigrationError(
      `migration ${migration.name} failed and was rolled back: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Statement by statement, each committed on its own. A failure leaves the statements before it
 * applied, so the file runs again from the top on the next attempt: it must be written to allow
 * that (IF NOT EXISTS). An index CREATE INDEX CONCURRENTLY left INVALID by a failed run would be
 * kept by IF NOT EXISTS: it is dropped first, and built again.
 */
async function applyOutsideTransaction(client: pg.Client, migration: Migration): Promise<void> {
  const statements = splitStatements(migration.sql);
  let ran = 0;
  try {
    for (const statement of statements) {
      await dropInvalidIndexes(client, concurrentIndexNames(statement));
      await client.query(statement);
      ran += 1;
    }
    await record(client, migration);
  } catch (error) {
    if (sqlState(error) === LOCK_NOT_AVAILABLE) throw error;
    throw new MigrationError(
      `migration ${migration.name} (no transaction) failed at statement ${ran + 1} of ` +
        `${statements.length}; the ${ran} before it stay applied and the file runs again from the ` +
        `top next time: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

async function dropInvalidIndexes(client: Queryable, names: string[]): Promise<void> {
  for (const name of names) {
    const invalid = await client.query<{ index: string }>(
      `select i.indexrelid::regclass::text as index from pg_index i
       where i.indexrelid = to_regclass($1) and not i.indisvalid`,
      [name],
    );
    for (const { index } of invalid.rows) await client.query(`drop index concurrently if exists ${index}`);
  }
}

async function record(client: Queryable, migration: Migration): Promise<void> {
  await client.query(`insert into ${MIGRATIONS_TABLE} (name, checksum) values ($1, $2)`, [
    migration.name,
    migration.checksum,
  ]);
}

/**
 * Who most likely held the lock: the oldest open transactions of this database, not themselves
 * waiting for a lock (other migrators wait for the advisory lock). PostgreSQL names the blocker only
 * while the wait lasts (pg_blocking_pids); once lock_timeout cancels it, this is the best account
 * left, and a lock is held by a transaction that began before the wait.
 */
async function lockHolders(client: Queryable): Promise<string> {
  const result = await client.query<{
    pid: number;
    application_name: string;
    usename: string | null;
    state: string | null;
    xact_start: Date;
    query: string;
  }>(
    `select pid, application_name, usename, state, xact_start, left(query, 120) as query
     from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null
       and wait_event_type is distinct from 'Lock'
     order by xact_start limit 5`,
  );
  if (result.rows.length === 0) return 'none found (the blocker has ended)';
  return result.rows
    .map(
      (r) =>
        `pid ${r.pid} (application_name "${r.application_name}", user ${r.usename ?? '?'}, ` +
        `${r.state ?? '?'}, in a transaction since ${r.xact_start.toISOString()}, ` +
        `last statement: ${JSON.stringify(r.query)})`,
    )
    .join('; ');
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
