import { Type } from 'typebox';
import type { GeocodeCache } from '../../ports/geocode-cache.ts';
import type { GeocodeOutcome } from '../../ports/geocoder.ts';
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

type OutcomeColumns = {
  longitude: number | null;
  latitude: number | null;
  confidence: number | null;
  failure: string | null;
};

/** A stored row (cache or job) as an outcome: a location, or the reason there is none. */
export function outcomeFromRow(r: OutcomeColumns): GeocodeOutcome {
  return r.longitude !== null && r.latitude !== null
    ? { location: { longitude: r.longitude, latitude: r.latitude }, confidence: r.confidence ?? 0 }
    : { failure: r.failure ?? 'not found' };
}

/** `unnest` input for (key, longitude, latitude, confidence, failure) columns. */
export function outcomeRows(results: Map<string, GeocodeOutcome>) {
  return sql.unnest(
    [...results.entries()].map(([key, outcome]) =>
      'location' in outcome
        ? [key, outcome.location.longitude, outcome.location.latitude, outcome.confidence, null]
        : [key, null, null, null, outcome.failure],
    ),
    ['text', 'float8', 'float8', 'float4', 'text'],
  );
}

export function postgresGeocodeCache(pool: DatabasePool): GeocodeCache {
  return {
    async get(provider, queries) {
      const found = new Map<string, GeocodeOutcome>();
      if (queries.length === 0) return found;
      const rows = await pool.any(sql.type(CacheRow)`
        select query, longitude, latitude, confidence, failure from geocode_cache
        where provider = ${provider} and query = any(${sql.array(queries, 'text')})`);
      for (const r of rows) found.set(r.query, outcomeFromRow(r));
      return found;
    },
    async put(provider, results) {
      if (results.size === 0) return;
      await pool.query(sql.unsafe`
        insert into geocode_cache (provider, query, longitude, latitude, confidence, failure)
        select ${provider}, * from ${outcomeRows(results)}
        on conflict (provider, query) do nothing`);
    },
  };
}
