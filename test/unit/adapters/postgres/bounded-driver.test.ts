import { ConnectionError } from 'slonik';
import t from 'tap';
import { DatabaseTimeoutError, withinTime } from '../../../../src/adapters/postgres/bounded-driver.ts';
import { isDatabaseUnreachable } from '../../../../src/adapters/postgres/connection-failures.ts';

// The client-side bound of the read replicas' pools (docs/scaling.md, "Read replicas"): work that
// never settles fails with a DatabaseTimeoutError, which counts as "unreachable", so the router
// runs the read again on the primary.

t.test('work that never answers fails after its bound, as unreachable', async (t) => {
  const never = new Promise<never>(() => {});
  const error = await withinTime(never, 20, 'read replica replica-1').catch((caught: unknown) => caught);
  t.ok(error instanceof DatabaseTimeoutError);
  t.match((error as Error).message, /read replica replica-1 did not answer within 20 ms/);
  t.ok(isDatabaseUnreachable(error), 'retried on the primary like a refused connection');
  t.ok(
    isDatabaseUnreachable(new ConnectionError('timeout expired', { cause: error as Error })),
    'also when Slonik wraps it (a connection not ready in time)',
  );
});

t.test('work that answers in time is untouched, its failure too', async (t) => {
  t.equal(await withinTime(Promise.resolve(42), 1000, 'the primary'), 42);
  const refused = Object.assign(new Error('syntax error'), { code: '42601' });
  const error = await withinTime(Promise.reject(refused), 1000, 'the primary').catch(
    (caught: unknown) => caught,
  );
  t.equal(error, refused);
  t.notOk(isDatabaseUnreachable(error), 'a wrong query is not an unreachable server');
});
