import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import { csv, pending, refresh, runImport, setup } from './deferred-counts-fixtures.ts';

// The deferred refresh of a bulk import's counts (chronomap_refresh_dataset_counts, migrations 0330
// and 0765): every count table must equal a recount from `events` after the refresh, and stay so
// through what follows it: another import through the triggers, a re-import that updates and moves
// events, deletions, an access change and the dataset's deletion (pending or not). A new write path
// for the counts (issue 37) must keep this test as it is.

t.test('counts refreshed in one pass equal a recount, and stay so after every kind of write', async (t) => {
  const { app, db, catalogId, deps } = await setup(t);
  // Under the deferral threshold: counted by the triggers while the big import is pending.
  const small = await runImport(app, deps, catalogId, { name: 'small.csv', content: csv('s', 40) });
  const big = await runImport(app, deps, catalogId, { name: 'big.csv', content: csv('b', 400) });
  t.equal(await pending(db.pool, big), true, 'the big import is pending');
  t.equal(await refresh(db.pool, big), true, 'the refresh adds its counts');
  t.equal(await pending(db.pool, big), false);
  t.equal(await refresh(db.pool, big), false, 'a second refresh finds nothing to do');
  await assertCountTablesExact(t, db.pool, 'after the refresh');

  // A re-import that updates (other times and places, some losing their location) and adds events.
  const changed = csv('b', 450)
    .split('\n')
    .map((line, i) => (i > 0 && i % 3 === 0 ? line.replace(/,2023-|,2024-/, ',2021-') : line))
    .join('\n');
  await runImport(
    app,
    deps,
    catalogId,
    { name: 'big-again.csv', content: changed },
    { dataset: String(big), settings: JSON.stringify({ duplicateHandling: 'update' }) },
  );
  await assertCountTablesExact(t, db.pool, 'after a re-import that updates and adds events');

  await db.pool.query(sql.unsafe`delete from events where dataset_id = ${big} and unique_id like 'b1%'`);
  await db.pool.query(
    sql.unsafe`update events set location = null where dataset_id = ${small} and unique_id like 's2%'`,
  );
  await assertCountTablesExact(t, db.pool, 'after deletes and updates');

  await db.pool.query(sql.unsafe`update datasets set is_public = false where id = ${big}`);
  await assertCountTablesExact(t, db.pool, 'after an access change');

  await db.pool.query(sql.unsafe`delete from datasets where id = ${small}`);
  await assertCountTablesExact(t, db.pool, 'after the deletion of a dataset');

  // A dataset deleted while pending contributes nothing, before or after.
  const again = await runImport(app, deps, catalogId, { name: 'again.csv', content: csv('a', 300) });
  t.equal(await pending(db.pool, again), true);
  await db.pool.query(sql.unsafe`delete from datasets where id = ${again}`);
  await assertCountTablesExact(t, db.pool, 'after the deletion of a pending dataset');
});
