import { Type } from 'typebox';
import type { GeocodeCache } from '../../ports/ingest-ports.ts';
import type { GeocodeOutcome } from '../../ports/ingest-store.ts';
import { type DatabasePool, row, sql } from './database.ts';

const CacheRow = row(
  Type.Object({
    query: Type.String(),
    longitude: Type.Union([Type.Number(), Type.Null()]),
    latitude: Type.Union([Type.Number(), Type.Null()]),
    confidence: Type.Union([Type.Number(), Type.Null()]),
    failure: Type.Union([Type.String(), Type.Null()]),
  }),
);

export function postgresGeocodeCache(pool: DatabasePool): GeocodeCache {
  return {
    async get(provider, queries) {
      const found = new Map<string, GeocodeOutcome>();
      if (queries.length === 0) return found;
      const rows = await pool.any(sql.type(CacheRow)`
        select query, longitude, latitude, confidence, failure from geocode_cache
        where provider = ${provider} and query = any(${sql.array(queries, 'text')})`);
      for (const r of rows) {
        found.set(
          r.query,
          r.longitude !== null && r.latitude !== null
            ? { location: { longitude: r.longitude, latitude: r.latitude }, confidence: r.confidence ?? 0 }
            : { failure: r.failure ?? 'not found' },
        );
      }
      return found;
    },
    async put(provider, results) {
      if (results.size === 0) return;
      await pool.query(sql.unsafe`
        insert into geocode_cache (provider, query, longitude, latitude, confidence, failure)
        select ${provider}, * from ${sql.unnest(
          [...results.entries()].map(([query, outcome]) =>
            'location' in outcome
              ? [query, outcome.location.longitude, outcome.location.latitude, outcome.confidence, null]
              : [query, null, null, null, outcome.failure],
          ),
          ['text', 'float8', 'float8', 'float4', 'text'],
        )}
        on conflict (provider, query) do nothing`);
    },
  };
}
