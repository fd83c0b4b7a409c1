import type { GeocodeCache } from '../../../src/ports/ingest/geocode-cache.ts';
import type { GeocodeOutcome } from '../../../src/ports/ingest/geocoder.ts';

/**
 * The GeocodeCache port in memory: a map per provider. Like postgresGeocodeCache it keeps the first
 * answer stored for a query and hands out copies; both pass test/contracts/ingest/geocode-cache.ts.
 */
export function memoryGeocodeCache(): GeocodeCache {
  const stored = new Map<string, GeocodeOutcome>();
  const key = (provider: string, query: string) => JSON.stringify([provider, query]);
  return {
    async get(provider, queries) {
      const found = new Map<string, GeocodeOutcome>();
      for (const query of queries) {
        const outcome = stored.get(key(provider, query));
        if (outcome) found.set(query, structuredClone(outcome));
      }
      return found;
    },
    async put(provider, results) {
      for (const [query, outcome] of results) {
        if (!stored.has(key(provider, query))) stored.set(key(provider, query), structuredClone(outcome));
      }
    },
  };
}
