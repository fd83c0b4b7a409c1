import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { postgresGeocodeCache } from '../../../src/adapters/postgres/ingest/geocode-cache.ts';
import { geocodeCacheContract } from '../../contracts/ingest/geocode-cache.ts';
import { testDatabase } from '../../helpers/database.ts';

// postgresGeocodeCache passes the GeocodeCache port's behaviour suite, the one the in-memory fake
// passes (test/unit/fakes/ingest/geocode-cache.test.ts). Each case empties the table first.
const db = await testDatabase(t);

geocodeCacheContract(t, async () => {
  await db.pool.query(sql.unsafe`truncate geocode_cache`);
  return postgresGeocodeCache(db.pool);
});
