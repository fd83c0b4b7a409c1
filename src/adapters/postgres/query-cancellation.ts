import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { type Interceptor, sql } from 'slonik';
import { withinTime } from './bounded-driver.ts';

// Cancels the statements of an HTTP request whose client went away. statement_timeout bounds a
// statement anyway, but a client that gives up (a closed tab, a proxy's own timeout, a script
// firing and dropping requests) should not keep a backend busy until then.
//
// Each request runs in a scope (AsyncLocalStorage). A Slonik interceptor, on every pool that serves
// requests, records which backend (pg_backend_pid, asked once per physical connection) runs each
// statement of the scope; when the client disconnects, pg_cancel_backend goes to those backends over a
// connection of its own, so a full pool cannot hold the cancel up. Outside a scope (workers, start-up)
// the interceptor does nothing but a lookup.
//
// A cancel must not land on another request's statement: a connection whose backend was sent a
// cancel is not given back to the pool until the cancel has been sent and the backend has run one
// `select 1` (which absorbs a cancel still pending there). Without this, a browser aborting many map
// tiles at once made innocent requests on the same backends fail with 503.

type QueryScope = { running: Map<string, number>; gone: boolean };

export type QueryCanceller = {
  /** The interceptor to install on every pool whose statements serve requests. */
  interceptor: Interceptor;
  newScope(): QueryScope;
  /** Runs `next` (and all it awaits) inside `scope`. */
  enter(scope: QueryScope, next: () => void): void;
  /** The client is gone: cancel what runs now and refuse what the request would still start. */
  cancel(scope: QueryScope): Promise<void>;
};

class ClientGoneError extends Error {
  constructor() {
    super('the client disconnected; statement not started');
    this.name = 'StatementCancelledError';
  }
}

/**
 * What a checkout's connection stands on: Slonik 49 gives every pool checkout a new connectionId,
 * but its bound connection keeps the pool's physical connection in `connection`, the same object for
 * as long as that connection lives. The backend pid is remembered on that object, so it is asked once
 * per physical connection, not once per checkout (a round trip on every request: docs/performance.md,
 * "Sixth round"). Without the field (another Slonik) it is asked per checkout, which stays correct.
 */
function physicalConnection(connection: object): object {
  const inner = (connection as { connection?: unknown }).connection;
  return typeof inner === 'object' && inner !== null ? inner : connection;
}

/** The request whose statements run now (one per process: every canceller and `sharedWork` use it). */
const storage = new AsyncLocalStorage<QueryScope>();

/**
 * Runs work that several requests await together (a resolution in flight shared by the requests that
 * ask the same thing at once) outside any one request's scope: it belongs to none of them, so the
 * client of the request that happened to start it going away must not cancel it for the others.
 * Its statements are still bounded by the pool's statement_timeout.
 */
export function sharedWork<T>(work: () => Promise<T>): Promise<T> {
  return storage.exit(work);
}

/**
 * `timeoutMs`: the client-side bound on the cancel's own connection and statement
 * (DATABASE_TIMEOUT_MARGIN_MS), so that a primary that stopped answering holds no cancel, and no
 * connection waiting for it (beforePoolConnectionRelease), for longer.
 */
export function queryCanceller(databaseUrl: string, options: { timeoutMs: number }): QueryCanceller {
  /** Physical connection -> backend process id. */
  const backendPids = new WeakMap<object, number>();
  /** The checkouts in use: Slonik connection id -> backend process id. */
  const pids = new Map<string, number>();
  /** Backend process id -> the cancel being sent to it. */
  const cancelsInFlight = new Map<number, Promise<void>>();
  const forget = (queryId: string) => {
    storage.getStore()?.running.delete(queryId);
    return null;
  };

  const interceptor: Interceptor = {
    name: 'chronomap-query-cancellation',
    afterPoolConnection: async (context, connection) => {
      const physical = physicalConnection(connection);
      let pid = backendPids.get(physical);
      if (pid === undefined) {
        pid = Number(await connection.oneFirst(sql.unsafe`select pg_backend_pid() as pid`));
        backendPids.set(physical, pid);
      }
      pids.set(context.connectionId, pid);
      return null;
    },
    beforePoolConnectionRelease: async (context, connection) => {
      const pid = pids.get(context.connectionId);
      pids.delete(context.connectionId);
      const pending = pid === undefined ? undefined : cancelsInFlight.get(pid);
      if (pid !== undefined && pending) {
        await pending;
        // Outside any request's scope, so that the gone client's scope does not refuse it.
        await storage.exit(() => connection.query(sql.unsafe`select 1`)).catch(() => null);
        if (cancelsInFlight.get(pid) === pending) cancelsInFlight.delete(pid);
      }
      return null;
    },
    beforeQueryExecution: (context) => {
      const scope = storage.getStore();
      if (!scope) return null;
      if (scope.gone) throw new ClientGoneError();
      const pid = pids.get(context.connectionId);
      if (pid !== undefined) scope.running.set(context.queryId, pid);
      return null;
    },
    afterQueryExecution: (context) => forget(context.queryId),
    queryExecutionError: (context) => forget(context.queryId),
  };

  return {
    interceptor,
    newScope: () => ({ running: new Map(), gone: false }),
    enter: (scope, next) => storage.run(scope, next),
    async cancel(scope) {
      scope.gone = true;
      const targets = [...new Set(scope.running.values())];
      if (targets.length === 0) return;
      const sending = (async () => {
        const client = new pg.Client({
          connectionString: databaseUrl,
          connectionTimeoutMillis: options.timeoutMs,
          query_timeout: options.timeoutMs,
        });
        try {
          await client.connect();
          await client.query('select pg_cancel_backend(pid) from unnest($1::int[]) as pid', [targets]);
        } catch {
          // Best effort: statement_timeout still ends the statements.
        } finally {
          // A frozen server never acknowledges the end either.
          await withinTime(client.end(), options.timeoutMs, 'the cancel connection').catch(() => {});
        }
      })();
      // Each of these connections drains the cancel before it goes back to the pool (above).
      for (const pid of targets) cancelsInFlight.set(pid, sending);
      await sending;
    },
  };
}
