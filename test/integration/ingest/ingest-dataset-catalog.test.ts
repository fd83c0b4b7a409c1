import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { testDatabase } from '../../helpers/database.ts';

// Migration 0321: one foreign key (dataset_id, catalog_id) -> datasets (id, catalog_id) on events.
// An event's catalog is its dataset's catalog: a mismatched insert is refused, a dataset that moves
// to another catalog takes its events (and their counts) along, and deletes still cascade.

const Id = row(Type.Object({ id: Type.Number() }));
const Count = row(Type.Object({ n: Type.Number() }));
const CatalogCount = row(Type.Object({ dataset_id: Type.Number(), n: Type.Number() }));

t.test('events follow their dataset: refused mismatch, move, cascading deletes', async (t) => {
  const { pool } = await testDatabase(t);
  const catalog = async (slug: string) =>
    (await pool.one(sql.type(Id)`insert into catalogs (slug, title) values (${slug}, ${slug}) returning id`))
      .id;
  const first = await catalog('first');
  const second = await catalog('second');
  const { id: dataset } = await pool.one(sql.type(Id)`
    insert into datasets (catalog_id, slug, title) values (${first}, 'moving', 'Moving') returning id`);
  await pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, location, event_timestamp)
    select ${dataset}, ${first}, 'e' || g, st_setsrid(st_makepoint(g, g), 4326), timestamptz '2024-01-01' + g * interval '40 days'
    from generate_series(1, 12) g`);

  const refused = await pool
    .query(
      sql.unsafe`
        insert into events (dataset_id, catalog_id, unique_id, event_timestamp)
        values (${dataset}, ${second}, 'wrong', now())`,
    )
    .then(
      () => null,
      (error: unknown) => error,
    );
  t.match(
    refused,
    { constraint: 'events_dataset_catalog_fkey' },
    "an event in another catalog than its dataset's is refused",
  );

  const yearTotals = () =>
    pool.any(sql.type(CatalogCount)`
      select dataset_id::int, sum(event_count)::int as n from event_counts
      where grain = 'y' and dataset_id < 0 group by 1 order by 1`);
  t.same(await yearTotals(), [{ dataset_id: -first, n: 12 }], 'counted under the first catalog');

  await pool.query(sql.unsafe`update datasets set catalog_id = ${second} where id = ${dataset}`);
  const moved = await pool.one(sql.type(Count)`
    select count(*)::int as n from events where dataset_id = ${dataset} and catalog_id = ${second}`);
  t.equal(moved.n, 12, 'moving the dataset moves its events to the new catalog');
  t.same(await yearTotals(), [{ dataset_id: -second, n: 12 }], 'and their catalog counts with them');
  const cells = await pool.one(sql.type(Count)`
    select coalesce(sum(event_count), 0)::int as n from event_cell_counts where grain = 'y' and dataset_id = ${-first}`);
  t.equal(cells.n, 0, 'no cell counts left under the first catalog');

  await pool.query(sql.unsafe`delete from catalogs where id = ${second}`);
  const left = await pool.one(sql.type(Count)`select count(*)::int as n from events`);
  t.equal(left.n, 0, "deleting the catalog deletes its dataset's events");
  const counts = await pool.one(sql.type(Count)`select count(*)::int as n from event_counts`);
  t.equal(counts.n, 0, 'and their counts');
});
