import t from 'tap';
import { geocodeCacheContract } from '../../../contracts/ingest/geocode-cache.ts';
import { memoryGeocodeCache } from '../../../fakes/ingest/geocode-cache.ts';

// The in-memory GeocodeCache passes the port's behaviour suite (postgresGeocodeCache passes the same
// one in test/integration/ingest/geocode-cache-contract.test.ts).
geocodeCacheContract(t, async () => memoryGeocodeCache());
