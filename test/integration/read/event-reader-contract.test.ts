import t from 'tap';
import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { eventReaderContract } from '../../contracts/read/event-reader.ts';
import type { ReadWorld } from '../../fakes/read/event-reader.ts';
import { testDatabase } from '../../helpers/database.ts';

// postgresEventReader passes the read model's behaviour suite, the one the in-memory fake passes
// (test/unit/fakes/read/event-reader.test.ts): each case writes the suite's world into a database of
// its own (public catalogs and datasets; the database gives its own ids).

const Id = row(Type.Object({ id: Type.Number() }));

async function store(pool: DatabasePool, world: ReadWorld): Promise<void> {
  const catalogIds = new Map<number, number>();
  for (const catalog of world.catalogs)
    catalogIds.set(
      catalog.id,
      await pool.oneFirst(sql.type(Id)`
        insert into catalogs (slug, title, is_public) values (${catalog.slug}, ${catalog.title}, true) returning id`),
    );
  const datasets = new Map<number, { id: number; catalogId: number }>();
  for (const dataset of world.datasets) {
    const catalogId = catalogIds.get(dataset.catalogId) ?? 0;
    const id = await pool.oneFirst(sql.type(Id)`
      insert into datasets (catalog_id, slug, title, is_public)
      values (${catalogId}, ${dataset.slug}, ${dataset.title}, true) returning id`);
    datasets.set(dataset.id, { id, catalogId });
  }
  for (const event of world.events) {
    const dataset = datasets.get(event.datasetId);
    if (!dataset) throw new Error(`no dataset ${event.datasetId}`);
    await pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      values (${dataset.id}, ${dataset.catalogId}, ${`u${event.id}`}, ${event.title}, '{}'::jsonb,
              ${event.longitude === null ? null : sql.fragment`st_setsrid(st_makepoint(${event.longitude}, ${event.latitude}), 4326)`},
              ${event.eventTimestamp})`);
  }
}

eventReaderContract(t, async (test, world) => {
  const db = await testDatabase(test);
  await store(db.pool, world);
  return postgresEventReader(db.pool);
});
