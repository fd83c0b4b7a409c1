import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresScraperRepoStore } from '../../../src/adapters/postgres/scrapers/scraper-repo-store.ts';
import { postgresScraperRunStore } from '../../../src/adapters/postgres/scrapers/scraper-run-store.ts';
import { postgresScraperStore } from '../../../src/adapters/postgres/scrapers/scraper-store.ts';
import { scraperStoresContract } from '../../contracts/scrapers/scraper-stores.ts';
import { testDatabase } from '../../helpers/database.ts';
import { createUser } from './scraper-fixtures.ts';

// The Postgres scraper stores pass the ports' behaviour suite, the one the in-memory fake passes
// (test/unit/fakes/scrapers/scraper-stores.test.ts). One database for the file; each case makes
// its own repos, and the rows they refer to are inserted here.
const db = await testDatabase(t);
const Id = row(Type.Object({ id: Type.Number() }));
let serial = 0;

const catalog = () =>
  db.pool.oneFirst(sql.type(Id)`
    insert into catalogs (slug, title) values (${`stores-${++serial}`}, 'Stores') returning id`);

scraperStoresContract(t, async () => ({
  repos: postgresScraperRepoStore(db.pool),
  scrapers: postgresScraperStore(db.pool),
  runs: postgresScraperRunStore(db.pool),
  user: async () => (await createUser(db.pool, 3)).id,
  catalog,
  dataset: async () =>
    db.pool.oneFirst(sql.type(Id)`
      insert into datasets (catalog_id, slug, title) values (${await catalog()}, ${`stores-${++serial}`}, 'Stores')
      returning id`),
  async addImport(datasetId, completed) {
    const fileId = await db.pool.oneFirst(sql.type(Id)`
      insert into ingest_files (original_name, stored_path, size_bytes, format, source, status)
      values ('output.csv', 'scrapers/output.csv', 40, 'csv', 'scraper', 'completed') returning id`);
    await db.pool.query(sql.unsafe`
      insert into ingest_jobs (ingest_file_id, dataset_id, stage)
      values (${fileId}, ${datasetId}, ${completed ? 'completed' : 'create-events'})`);
    return fileId;
  },
}));
