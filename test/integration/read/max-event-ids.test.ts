import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { MAX_EVENT_IDS } from '../../../src/domain/read/clustering.ts';
import { testDatabase } from '../../helpers/database.ts';

// "At most 10 event ids" is one number in TypeScript (MAX_EVENT_IDS, which the read model's SQL and
// the route schema use) and one in SQL (chronomap_max_event_ids(), which the writers of the fine
// cells' ids use: the triggers of migration 0765, the refresh and the rebuild of 0969). The two
// must agree, and no function of the schema may carry the limit as a literal of its own again.

t.test('the SQL limit on event ids is the TypeScript one', async (t) => {
  const db = await testDatabase(t);
  const limit = await db.pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`select chronomap_max_event_ids() as n`,
  );
  t.equal(limit, MAX_EVENT_IDS);

  const ownLimit = await db.pool.anyFirst(sql.type(row(Type.Object({ name: Type.String() })))`
    select p.proname as name
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema() and p.proname like 'chronomap_%'
      and p.prosrc ~ ${'<=\\s*10\\M'}`);
  t.same(ownLimit, [], 'no function compares with a literal 10');

  const readers = await db.pool.anyFirst(sql.type(row(Type.Object({ name: Type.String() })))`
    select p.proname as name
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema() and p.prosrc like '%chronomap_max_event_ids()%'
    order by 1`);
  t.same(readers, [
    'chronomap_event_fine_counts_trigger',
    'chronomap_fine_cells_rebuild',
    'chronomap_refresh_dataset_counts',
  ]);
});
