// Client-side time bounds on the primary's pools (issue 31 §1; bounded-driver.ts). The server's
// statement_timeout ends a slow statement, but a primary that is frozen, or cut off by a network
// that drops every packet, answers nothing, not even its timeout: without a bound here a request
// waited as long as the primary was gone. A query gets the longest statement_timeout its pool's
// statements may set, plus DATABASE_TIMEOUT_MARGIN_MS; past that, it fails with a
// DatabaseTimeoutError (503 DATABASE_UNAVAILABLE), which no working statement can reach. A
// connection gets the margin, with Slonik's retries kept: the primary has no other server to go to.

type PrimaryBounds = { connectMs: number; queryMs?: number; retryConnect: true };

/**
 * The bounds of a primary's pool whose statements set no statement_timeout longer than
 * `longestStatementMs` (the pool's own, or the longest `set local statement_timeout` run on it).
 */
export function primaryBounds(longestStatementMs: number, marginMs: number): PrimaryBounds {
  return { connectMs: marginMs, queryMs: longestStatementMs + marginMs, retryConnect: true };
}

/**
 * The bounds of a primary's pool that runs a statement with no statement_timeout at all (the jobs'
 * pool: ingest-datasets.ts#refreshDatasetCounts): its connect only (docs/decisions.md, "The jobs'
 * pool bounds its connect only").
 */
export function primaryConnectBound(marginMs: number): PrimaryBounds {
  return { connectMs: marginMs, retryConnect: true };
}
