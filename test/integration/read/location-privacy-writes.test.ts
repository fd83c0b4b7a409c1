import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresDeferredCounts } from '../../../src/adapters/postgres/ingest/ingest-datasets.ts';
import { setUp } from '../../helpers/location-privacy.ts';

// Writes recompute only the cells they touch, and a deferred bulk import its dataset once
// (migration 0960). The oracle is the whole-dataset recompute of migration 0880: after every write
// the stored generalised locations must be exactly those it computes (checked in a transaction that
// is rolled back, so the check changes nothing).

const Drift = row(Type.Object({ id: Type.Number(), stored: Type.Union([Type.String(), Type.Null()]) }));

type Db = Awaited<ReturnType<typeof setUp>>['db'];

class Rollback extends Error {}

/** Events whose stored generalised location differs from the whole-dataset recompute's. */
async function drift(db: Db): Promise<number[]> {
  let differing: number[] = [];
  await db.pool
    .transaction(async (tx) => {
      const state = sql.type(Drift)`
        select id, st_astext(public_location) as stored from events order by id`;
      const before = await tx.any(state);
      await tx.query(sql.unsafe`select chronomap_refresh_public_locations(id) from datasets order by id`);
      const after = new Map((await tx.any(state)).map((r) => [r.id, r.stored]));
      differing = before.filter((r) => after.get(r.id) !== r.stored).map((r) => r.id);
      throw new Rollback();
    })
    .catch((error: unknown) => {
      if (!(error instanceof Rollback)) throw error;
    });
  return differing;
}

const insert = (slug: string, id: string, lon: number, lat: number) => sql.unsafe`
  insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
  select d.id, d.catalog_id, ${id}, ${id}, '{}'::jsonb, st_setsrid(st_makepoint(${lon}, ${lat}), 4326),
         timestamptz '2025-06-01'
  from datasets d where d.slug = ${slug}`;

const located = async (db: Db, slug: string) =>
  Number(
    await db.pool.oneFirst(sql.unsafe`
      select count(public_location) from events e join datasets d on d.id = e.dataset_id where d.slug = ${slug}`),
  );

t.test('every kind of write leaves exactly the whole recompute’s locations', async (t) => {
  const { db } = await setUp(t);
  t.same(await drift(db), [], 'the starting dataset');
  // A second private dataset with 100 km cells, k = 2, at the clamped cells of the antimeridian and
  // the pole, where a cell's points lie farthest from its centre.
  await db.pool.query(sql.unsafe`
    insert into datasets (catalog_id, slug, title, is_public, created_by, privacy_cell_metres, privacy_min_count)
    select catalog_id, 'edges', 'Edges', true, created_by, 100000, 2 from datasets where slug = 'sightings'`);

  const steps: [string, ReturnType<typeof sql.unsafe>][] = [
    ['a lone cell reaches k', insert('sightings', 'w1', 13.6002, 52.3003)],
    ['and k', insert('sightings', 'w2', 13.6003, 52.3001)],
    ['a new lone cell', insert('sightings', 'w3', -3.7, 40.4)],
    ['the antimeridian', insert('edges', 'x1', 179.9999, 10.0001)],
    ['its cell pair', insert('edges', 'x2', 179.3, 10.2)],
    ['the pole', insert('edges', 'x3', 12.0, 89.9999)],
    ['its cell pair', insert('edges', 'x4', -150.0, 89.99)],
    [
      'a batch over several cells and datasets',
      sql.unsafe`
        insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
        select d.id, d.catalog_id, d.slug || '-b' || n, 'b', '{}'::jsonb,
               st_setsrid(st_makepoint(13.2 + n * 0.004, 52.6 + n * 0.002), 4326), timestamptz '2025-07-01'
        from datasets d cross join generate_series(1, 12) n where d.slug in ('sightings', 'edges')`,
    ],
    [
      'a move out of the group',
      sql.unsafe`update events set location = st_setsrid(st_makepoint(13.2004, 52.6002), 4326) where unique_id = 'e2'`,
    ],
    ['a point removed', sql.unsafe`update events set location = null where unique_id = 'e3'`],
    ['a title only', sql.unsafe`update events set title = 'renamed' where unique_id like 'e%'`],
    ['deletes', sql.unsafe`delete from events where unique_id in ('w1', 'x4', 'e4')`],
    [
      'a move to a dataset without privacy',
      sql.unsafe`
        update events set dataset_id = (select id from datasets where slug = 'plain')
        where unique_id = 'sightings-b3'`,
    ],
  ];
  await db.pool.query(sql.unsafe`
    insert into datasets (catalog_id, slug, title, is_public, created_by)
    select catalog_id, 'plain', 'Plain', true, created_by from datasets where slug = 'sightings'`);
  for (const [name, statement] of steps) {
    await db.pool.query(statement);
    t.same(await drift(db), [], name);
  }
  t.ok((await located(db, 'edges')) >= 2, 'the edge cells were placed (the check is not vacuous)');
});

t.test('a deferred bulk import writes no locations until its counts are refreshed', async (t) => {
  const { db } = await setUp(t);
  await db.pool.query(sql.unsafe`
    insert into datasets (catalog_id, slug, title, is_public, created_by, privacy_cell_metres, privacy_min_count)
    select catalog_id, 'bulk', 'Bulk', true, created_by, 1000, 2 from datasets where slug = 'sightings'`);
  const id = Number(await db.pool.oneFirst(sql.unsafe`select id from datasets where slug = 'bulk'`));
  const counts = postgresDeferredCounts(db.pool);
  t.ok(await counts.deferDatasetCounts(id), 'the empty dataset defers its counts');
  for (let batch = 0; batch < 3; batch += 1)
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      select d.id, d.catalog_id, 'bulk-' || ${batch} || '-' || n, 'b', '{}'::jsonb,
             st_setsrid(st_makepoint(13.4 + (n % 4) * 0.02, 52.5), 4326), timestamptz '2025-07-01'
      from datasets d cross join generate_series(1, 10) n where d.id = ${id}`);
  t.equal(await located(db, 'bulk'), 0, 'while pending: no generalised location (none shown to readers)');
  t.ok(await counts.refreshDatasetCounts(id), 'the deferred refresh runs');
  t.equal(await located(db, 'bulk'), 30, 'then every event of a cell of k or more is placed');
  t.same(await drift(db), [], 'exactly as the whole recompute');
  await db.pool.query(insert('bulk', 'after', 13.4, 52.5));
  t.same(await drift(db), [], 'and writes after it are incremental again');
});
