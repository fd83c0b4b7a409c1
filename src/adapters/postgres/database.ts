import { createHash } from 'node:crypto';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import {
  createPool,
  type DatabasePool,
  type DriverTypeParser,
  type Interceptor,
  type QuerySqlToken,
  sql,
} from 'slonik';
import { type Static, type TSchema, Type } from 'typebox';
import { Compile } from 'typebox/compile';
import { boundedPgDriver } from './bounded-driver.ts';

// Slonik pool set up once for the whole service, with rows typed and checked by a TypeBox schema
// per query (`sql.type(row(Schema))`).

export type { DatabasePool };
export { sql };

/** Postgres prints `2026-03-27 23:35:09.558+00`; the API speaks ISO 8601 in UTC. */
function isoTimestamp(value: string): string {
  const normalised = value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  return new Date(normalised).toISOString();
}

const typeParsers: DriverTypeParser[] = [
  { name: 'int8', parse: (value: string) => Number(value) },
  { name: 'numeric', parse: (value: string) => Number(value) },
  { name: 'float8', parse: (value: string) => Number(value) },
  { name: 'timestamptz', parse: isoTimestamp },
];

export async function createDatabasePool(
  connectionString: string,
  options: {
    maximumPoolSize?: number;
    statementTimeoutMs?: number;
    /**
     * Sessions that always use a prepared statement's generic plan (`plan_cache_mode =
     * force_generic_plan`): planned once per connection, never again. Only for statements whose
     * generic plan is as good as a custom one for any values; unnamed statements are planned once
     * each with their parameters unknown too, so nothing else may run on such a pool.
     */
    genericPlans?: boolean;
    /**
     * PostgreSQL's parallel workers per statement (`max_parallel_workers_per_gather`) in every
     * session; unset: the server's own. The read API's pools set READ_PARALLEL_WORKERS.
     */
    parallelWorkers?: number;
    /** E.g. query-cancellation.ts's, on the pools that serve HTTP requests. */
    interceptors?: Interceptor[];
    /**
     * Client-side bounds for a server that may stop answering (bounded-driver.ts): a connection
     * not ready within `connectMs` fails with a DatabaseTimeoutError, at once unless
     * `retryConnect` (then Slonik's retries, each bounded so: the primary, which has no other
     * server to go to); a query without an answer after `queryMs` fails with a
     * DatabaseTimeoutError and its connection is closed. Without `queryMs` only the connect is
     * bounded (a pool that runs statements without a statement_timeout: docs/decisions.md).
     */
    timeBounds?: { connectMs: number; queryMs?: number; retryConnect?: boolean };
  } = {},
): Promise<DatabasePool> {
  const always = [
    ...(options.genericPlans ? ['plan_cache_mode=force_generic_plan'] : []),
    ...(options.parallelWorkers === undefined
      ? []
      : [`max_parallel_workers_per_gather=${options.parallelWorkers}`]),
  ];
  const bounds = options.timeBounds;
  return createPool(withSettings(connectionString, always), {
    typeParsers,
    maximumPoolSize: options.maximumPoolSize ?? 10,
    connectionTimeout: bounds?.connectMs ?? 5_000,
    ...(bounds
      ? {
          driverFactory: boundedPgDriver(bounds.queryMs),
          ...(bounds.retryConnect ? {} : { connectionRetryLimit: 0 }),
          // A query that timed out is on a server that does not answer: close its socket soon.
          ...(bounds.queryMs === undefined
            ? {}
            : { gracefulTerminationTimeout: Math.min(bounds.connectMs, 250) }),
        }
      : {}),
    // Server-side statement_timeout of every connection (docs/api.md, "Budgets, caps and limits").
    statementTimeout: options.statementTimeoutMs ?? 60_000,
    interceptors: options.interceptors ?? [],
    idleTimeout: 30_000,
    resetConnection: async () => {},
  });
}

/**
 * Session settings in the URL's `options`. JIT compilation off (unless the URL sets `options`
 * itself): the service's queries are short, and when the planner overestimates one (the read API's
 * correlated lookups) PostgreSQL spent seconds compiling it under load for a query that runs in
 * milliseconds. `always`: added to the URL's own options too.
 */
function withSettings(connectionString: string, always: string[]): string {
  try {
    const url = new URL(connectionString);
    const own = url.searchParams.get('options');
    const settings = [own ?? '-c jit=off', ...always.map((setting) => `-c ${setting}`)];
    url.searchParams.set('options', settings.join(' '));
    return url.toString();
  } catch {
    return connectionString;
  }
}

/**
 * The query as a named prepared statement, named after its text: each connection parses and
 * analyses it once, and PostgreSQL may keep a generic plan for it (plan_cache_mode auto: after five
 * executions, when the generic plan is estimated no dearer than the custom ones). For hot statements
 * whose text takes few shapes (the values are parameters); every shape stays prepared on every
 * connection of the pool until the connection closes.
 */
export function prepared<T extends StandardSchemaV1>(query: QuerySqlToken<T>): QuerySqlToken<T> {
  return Object.freeze({ ...query, name: statementName(query.sql) });
}

/**
 * The names of the texts seen lately: a map lookup instead of a SHA-1 of a few kilobytes per
 * statement (a tenth of the API process's CPU for building an /events page statement). Bounded
 * (the texts take a few dozen shapes; a name is the same when computed again).
 */
const statementNames = new Map<string, string>();
const STATEMENT_NAMES_LIMIT = 500;

export function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `chronomap_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`;
    if (statementNames.size >= STATEMENT_NAMES_LIMIT) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}

/** A Standard Schema wrapper around a compiled TypeBox schema, for Slonik's `sql.type`. */
/** A column that may be null, for a row schema of `row(...)`. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export function row<T extends TSchema>(schema: T): StandardSchemaV1<Static<T>> {
  const validator = Compile(schema);
  return {
    '~standard': {
      version: 1,
      vendor: 'chronomap-typebox',
      validate: (value) =>
        validator.Check(value)
          ? { value: value as Static<T> }
          : {
              issues: validator.Errors(value).map((error) => ({
                message: `${error.instancePath || '/'} ${error.message}`,
              })),
            },
    },
  };
}

/** `postgres://user:secret@host/db` -> `postgres://user:***@host/db`, for messages and logs. */
export function redactUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return connectionString.replace(/:[^:@/]*@/, ':***@');
  }
}
