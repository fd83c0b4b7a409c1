import http from 'node:http';
import t from 'tap';
import { startCli, waitForOutput } from '../../helpers/cli.ts';
import { testDatabase } from '../../helpers/database.ts';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { createDatabasePool } from '../../../src/adapters/postgres/database.ts';

// An API's drain on SIGTERM is bounded (issue 32 §2): an export still running after HTTP_DRAIN_MS
// is cut, its client sees the connection close without a complete response, and the process exits.
// The export waits on a lock the test holds on `events`, so it is in flight at the SIGTERM whatever
// the machine's speed, and would hold an unbounded drain for as long as the lock is held.

t.test('SIGTERM with an export in flight: the export is cut at the bound, the API exits 0', async (t) => {
  const db = await testDatabase(t);
  const url = new URL(db.url);
  url.searchParams.set('application_name', 'api-drain');
  const child = startCli(['api'], {
    DATABASE_URL: url.toString(),
    PORT: '0',
    LOG_LEVEL: 'warn',
    // Longer than the drain's bound: the export is cut by the drain, not by its own budgets.
    READ_STATEMENT_TIMEOUT_MS: '60000',
    READ_REQUEST_BUDGET_MS: '60000',
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const [, address] = await waitForOutput(child, /listening on (http:\/\/[\d.:]+)/);

  const pool = await createDatabasePool(db.url, { maximumPoolSize: 2 });
  t.teardown(() => pool.end());
  let unlock = () => {};
  const unlocked = new Promise<void>((resolve) => (unlock = resolve));
  let locked = () => {};
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holding = pool.transaction(async (transaction) => {
    await transaction.query(sql.unsafe`lock table events in access exclusive mode`);
    locked();
    await unlocked;
  });
  await isLocked;

  const outcome = new Promise<{ status?: number; complete: boolean; error?: string }>((resolve) => {
    const request = http.get(`${address}/api/v1/events.csv`, (response) => {
      response.resume();
      response.on('end', () => resolve({ status: response.statusCode ?? 0, complete: response.complete }));
      response.on('error', (error) =>
        resolve({ status: response.statusCode ?? 0, complete: false, error: error.message }),
      );
    });
    request.on('error', (error) => resolve({ complete: false, error: error.message }));
  });
  // The export's statement waits on the lock: it is in flight.
  for (;;) {
    const waiting = await pool.oneFirst(sql.unsafe`
      select count(*)::int from pg_stat_activity
      where application_name = 'api-drain' and wait_event_type = 'Lock'`);
    if (Number(waiting) > 0) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }

  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const seen = await outcome;
  t.equal(seen.complete, false, `the client sees an aborted transfer (${JSON.stringify(seen)})`);
  t.equal(await exited, 0, 'the API exits cleanly');
  t.match(stderr, /shutdown: responses still running after 5000 ms were cut/);
  unlock();
  await holding;
});
