import { createPgDriverFactory } from '@slonik/pg-driver';
import type { DriverFactory } from 'slonik';

// Client-side time bounds for the pools of a server that may stop answering (the read replicas,
// docs/scaling.md, "Read replicas"). `statement_timeout` is enforced by the server, so a server that
// is stopped, or a network that drops every packet, never ends a statement: without a bound here a
// read waited as long as the standby was gone (issue 31 §1). The pg driver has no query timeout of
// its own that Slonik passes on, so its clients are wrapped: a query that has not answered in time
// fails with a DatabaseTimeoutError, which Slonik answers by destroying the connection (the socket
// is closed after the pool's gracefulTerminationTimeout), so no hung connection stays in the pool.

/**
 * A database that did not answer within a client-side bound. Its code is the socket's ETIMEDOUT, so
 * connection-failures.ts#isDatabaseUnreachable counts it with the other ways a server is unreachable
 * (a read replica's read is run again on the primary; elsewhere 503 DATABASE_UNAVAILABLE).
 */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'DatabaseTimeoutError';
  }
}

/** `work`, or a DatabaseTimeoutError after `ms` if it has not settled by then (its result is then dropped). */
export function withinTime<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DatabaseTimeoutError(`${what} did not answer within ${ms} ms`)), ms);
  });
  work.catch(() => {}); // a late failure of the abandoned work is nobody's to handle
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * Slonik's pg driver whose queries each fail after `queryTimeoutMs` without an answer (none when
 * undefined), and whose connection attempts that pg ends at the pool's connectionTimeout ("timeout
 * expired", no code) fail with a DatabaseTimeoutError too. The bound is per query: a connection
 * idle between queries (an export's snapshot holder, idle in its transaction) runs no timer.
 */
export function boundedPgDriver(queryTimeoutMs: number | undefined): DriverFactory {
  const pgDriver = createPgDriverFactory();
  return async (input) => {
    const driver = await pgDriver(input);
    const connectMs = input.driverConfiguration.connectionTimeout;
    return {
      createClient: async () => {
        const client = await driver.createClient().catch((error: unknown) => {
          if (error instanceof Error && !('code' in error) && /timeout/i.test(error.message))
            throw new DatabaseTimeoutError(
              `the database server accepted no connection within ${connectMs} ms`,
              {
                cause: error,
              },
            );
          throw error;
        });
        if (queryTimeoutMs === undefined) return client;
        return {
          ...client,
          query: (text, values, options) =>
            withinTime(client.query(text, values, options), queryTimeoutMs, 'the database server'),
        };
      },
    };
  };
}
