import t from 'tap';
import { primaryBounds, primaryConnectBound } from '../../../../src/adapters/postgres/primary-bounds.ts';

// The primary's client-side bounds (docs/operations.md, "When the database stops answering"): a
// query gets its pool's longest statement_timeout plus the margin, so the server ends every
// statement that still runs first; the connect gets the margin, with Slonik's retries kept.

t.test("a primary pool's bounds cover its longest statement_timeout", async (t) => {
  t.same(primaryBounds(10_000, 5_000), { connectMs: 5_000, queryMs: 15_000, retryConnect: true });
  t.same(primaryBounds(60_000, 500), { connectMs: 500, queryMs: 60_500, retryConnect: true });
});

t.test('the jobs pool, which runs a statement without statement_timeout: connect only', async (t) => {
  const bounds = primaryConnectBound(5_000);
  t.same(bounds, { connectMs: 5_000, retryConnect: true });
  t.equal(bounds.queryMs, undefined, 'no query bound that would cut its counts refresh');
});
