import { Type } from 'typebox';
import type { DatabaseCheck, PostgisCheck } from '../../../domain/site/health.ts';
import type { DatabaseStatus } from '../../../ports/site/system-status.ts';
import { isDatabaseUnreachable } from '../connection-failures.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { diffMigrations, MIGRATIONS_TABLE, type Migration } from '../migrator.ts';
import { sqlState } from '../sql-state.ts';

const UNDEFINED_FUNCTION = '42883';

export function postgresDatabaseStatus(pool: DatabasePool, migrations: Migration[]): DatabaseStatus {
  return {
    async ping(): Promise<DatabaseCheck> {
      try {
        await pool.oneFirst(sql.type(row(Type.Object({ ok: Type.Number() })))`select 1 as ok`);
        return { status: 'ok' };
      } catch (error) {
        return { status: 'error', message: describe(error) };
      }
    },

    async postgis(): Promise<PostgisCheck> {
      try {
        const version = await pool.oneFirst(
          sql.type(row(Type.Object({ version: Type.String() })))`select postgis_lib_version() as version`,
        );
        return { status: 'ok', version };
      } catch (error) {
        if (sqlState(error) === UNDEFINED_FUNCTION) {
          return { status: 'not found', message: 'the postgis extension is not installed in this database' };
        }
        return { status: 'error', message: describe(error) };
      }
    },

    async pendingMigrations(): Promise<string[]> {
      try {
        return await pending();
      } catch (error) {
        throw new Error(describe(error), { cause: error });
      }
    },
  };

  async function pending(): Promise<string[]> {
    const hasTable = await pool.oneFirst(
      sql.type(row(Type.Object({ present: Type.Boolean() })))`
        select to_regclass(${MIGRATIONS_TABLE}) is not null as present`,
    );
    if (!hasTable) return migrations.map((m) => m.name);
    const rows = await pool.any(
      sql.type(row(Type.Object({ name: Type.String(), checksum: Type.String() })))`
        select name, checksum from ${sql.identifier([MIGRATIONS_TABLE])}`,
    );
    return diffMigrations(new Map(rows.map((r) => [r.name, r.checksum])), migrations);
  }
}

/** The first code along the cause chain: a socket error's (ECONNREFUSED) or a SQLSTATE. */
function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z0-9_]{5,20}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * What the report says went wrong. /api/health is public: a database that cannot be reached is
 * named by its error code only, not by the message, which carries the server's address or socket
 * path (`connect ECONNREFUSED 10.0.0.5:5432`).
 */
function describe(error: unknown): string {
  if (isDatabaseUnreachable(error)) {
    const code = errorCode(error);
    return `the database cannot be reached${code ? ` (${code})` : ''}`;
  }
  const cause = (error as { cause?: { message?: string } })?.cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return cause && cause !== message ? `${message}: ${cause}` : message;
}
