// Time budgets from the environment (docs/api.md, "Budgets, caps and limits"): how long one SQL
// statement may run on each connection pool, how long a read request may take in all (its
// statements together: http/client-gone.ts), and how long a client may take to send a request.

export type BudgetConfig = {
  /** statement_timeout of the /api/v1 read API's pools (READ_STATEMENT_TIMEOUT_MS). */
  readStatementTimeoutMs: number;
  /** statement_timeout of the HTTP routes' pool: collections, accounts, ingest routes (COLLECTIONS_STATEMENT_TIMEOUT_MS). */
  collectionsStatementTimeoutMs: number;
  /** statement_timeout of the background workers' pool: ingest jobs, scrapers, counts (JOBS_STATEMENT_TIMEOUT_MS). */
  jobsStatementTimeoutMs: number;
  /**
   * The primary's client-side bounds (DATABASE_TIMEOUT_MARGIN_MS): a connection not made within
   * this fails, and a query not answered this long past the longest statement_timeout its pool's
   * statements may set fails with 503 DATABASE_UNAVAILABLE (a primary frozen or cut off answers
   * no statement_timeout of its own). composition/primary-bounds.ts.
   */
  databaseTimeoutMarginMs: number;
  /** A whole /api/v1 or /ogc read, all its statements together, exports aside (READ_REQUEST_BUDGET_MS). */
  readRequestBudgetMs: number;
  /** A whole collection read, GET /api/{collection}[/{id}] (COLLECTIONS_REQUEST_BUDGET_MS). */
  collectionsRequestBudgetMs: number;
  /** Time from a connection's first byte to the end of the request's headers (HEADERS_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included (REQUEST_TIMEOUT_MS); uploads have to fit in it. */
  requestTimeoutMs: number;
  /** An idle keep-alive or stalled connection is closed after this long without a byte (CONNECTION_TIMEOUT_MS). */
  connectionTimeoutMs: number;
};

export const DEFAULT_BUDGETS: BudgetConfig = {
  readStatementTimeoutMs: 5_000,
  collectionsStatementTimeoutMs: 10_000,
  jobsStatementTimeoutMs: 60_000,
  databaseTimeoutMarginMs: 5_000,
  readRequestBudgetMs: 5_000,
  collectionsRequestBudgetMs: 10_000,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 300_000,
  connectionTimeoutMs: 30_000,
};

export type Read = <T>(variable: string, parse: (raw: string) => T, fallback: T) => T;

export const milliseconds = (min: number, max: number) => (raw: string) => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max)
    throw new Error(`must be a number of milliseconds from ${min} to ${max} (got "${raw}")`);
  return value;
};

export function loadBudgetConfig(read: Read): BudgetConfig {
  const hour = 3_600_000;
  const budgets: BudgetConfig = {
    readStatementTimeoutMs: read(
      'READ_STATEMENT_TIMEOUT_MS',
      milliseconds(100, hour),
      DEFAULT_BUDGETS.readStatementTimeoutMs,
    ),
    collectionsStatementTimeoutMs: read(
      'COLLECTIONS_STATEMENT_TIMEOUT_MS',
      milliseconds(100, hour),
      DEFAULT_BUDGETS.collectionsStatementTimeoutMs,
    ),
    jobsStatementTimeoutMs: read(
      'JOBS_STATEMENT_TIMEOUT_MS',
      milliseconds(100, 24 * hour),
      DEFAULT_BUDGETS.jobsStatementTimeoutMs,
    ),
    databaseTimeoutMarginMs: read(
      'DATABASE_TIMEOUT_MARGIN_MS',
      milliseconds(100, hour),
      DEFAULT_BUDGETS.databaseTimeoutMarginMs,
    ),
    readRequestBudgetMs: read(
      'READ_REQUEST_BUDGET_MS',
      milliseconds(100, hour),
      DEFAULT_BUDGETS.readRequestBudgetMs,
    ),
    collectionsRequestBudgetMs: read(
      'COLLECTIONS_REQUEST_BUDGET_MS',
      milliseconds(100, hour),
      DEFAULT_BUDGETS.collectionsRequestBudgetMs,
    ),
    headersTimeoutMs: read('HEADERS_TIMEOUT_MS', milliseconds(100, hour), DEFAULT_BUDGETS.headersTimeoutMs),
    requestTimeoutMs: read(
      'REQUEST_TIMEOUT_MS',
      milliseconds(100, 24 * hour),
      DEFAULT_BUDGETS.requestTimeoutMs,
    ),
    connectionTimeoutMs: read(
      'CONNECTION_TIMEOUT_MS',
      milliseconds(100, hour),
      DEFAULT_BUDGETS.connectionTimeoutMs,
    ),
  };
  return budgets;
}
