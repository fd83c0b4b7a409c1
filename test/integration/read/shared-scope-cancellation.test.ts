import pg from 'pg';
import t from 'tap';
import { createDatabasePool, sql } from '../../../src/adapters/postgres/database.ts';
import { queryCanceller } from '../../../src/adapters/postgres/query-cancellation.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// Requests in flight at the same time for the same viewer and filter share one scope resolution
// (postgres/read/scope.ts). When the client of the request that started it goes away, its statements
// are cancelled (query-cancellation.ts); the shared resolution must not be one of them, or every
// other request waiting on it answers 503: the Explore page, whose map, histogram, list and tiles
// ask at once and whose old view's requests are aborted on every pan, showed exactly that.

t.test('a gone client does not cancel the scope resolution other requests share', async (t) => {
  const db = await testDatabase(t);
  await loadReadFixture(db.pool);
  const canceller = queryCanceller(db.url, { timeoutMs: 5_000 });
  const pool = await createDatabasePool(db.url, {
    maximumPoolSize: 4,
    interceptors: [canceller.interceptor],
  });
  t.teardown(() => pool.end());
  const reader = postgresEventReader(pool);
  const filter = parseEventFilter({});

  // Hold the scope's statement (it reads `datasets`) until the first client is gone.
  const locker = new pg.Client({ connectionString: db.url });
  await locker.connect();
  t.teardown(() => locker.end());
  await locker.query('begin');
  await locker.query('lock table datasets in access exclusive mode');

  const inScope = <T>(scope: object, work: () => Promise<T>) =>
    new Promise<PromiseSettledResult<T>>((resolve) =>
      canceller.enter(scope as never, () => {
        work().then(
          (value) => resolve({ status: 'fulfilled', value }),
          (reason: unknown) => resolve({ status: 'rejected', reason }),
        );
      }),
    );
  const gone = canceller.newScope();
  const first = inScope(gone, () => reader.countEvents(null, filter));
  // Bounded wait until the shared statement is waiting on the lock (a wait, not a timed assertion).
  for (let i = 0; i < 200; i += 1) {
    const waiting = await locker.query(
      "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()",
    );
    if (waiting.rows[0].n > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const second = inScope(canceller.newScope(), () => reader.countEvents(null, filter));

  await canceller.cancel(gone as never);
  await locker.query('commit');

  const answer = await second;
  t.equal(answer.status, 'fulfilled', 'the request still waiting is answered');
  const expected = Number(await db.pool.oneFirst(sql.unsafe`select count(*)::int from events`));
  t.same(answer.status === 'fulfilled' ? answer.value : null, expected, 'with the count of every event');
  const abandoned = await first;
  t.equal(abandoned.status, 'rejected', "the gone client's own statement is not started");
  t.match(abandoned.status === 'rejected' ? abandoned.reason : null, { name: 'StatementCancelledError' });
});
