import { Type } from 'typebox';
import type { GeocodeCache } from '../../../ports/ingest/geocode-cache.ts';
import type { GeocodeMatch } from '../../../domain/ingest/geocoding/located-by.ts';
import type { GeocodeOutcome } from '../../../ports/ingest/geocoder.ts';
import { type DatabasePool, row, sql } from '../database.ts';

const CacheRow = row(
  Type.Object({
    query: Type.String(),
    longitude: Type.Union([Type.Number(), Type.Null()]),
    latitude: Type.Union([Type.Number(), Type.Null()]),
    confidence: Type.Union([Type.Number(), Type.Null()]),
    failure: Type.Union([Type.String(), Type.Null()]),
    detail: Type.Union([Type.Unknown(), Type.Null()]),
  }),
);

type OutcomeColumns = {
  longitude: number | null;
  latitude: number | null;
  confidence: number | null;
  failure: string | null;
  detail: unknown;
};

/** What `detail` holds: the match, and for a refused place that it was refused for low confidence. */
type OutcomeDetail = { match?: GeocodeMatch; lowConfidence?: boolean };

function matchOf(detail: unknown): GeocodeMatch | undefined {
  const match = (detail as OutcomeDetail | null)?.match;
  return match && typeof match === 'object' && typeof match.provider === 'string' ? match : undefined;
}

/** A stored row (cache or job) as an outcome: a location, or the reason there is none. */
export function outcomeFromRow(r: OutcomeColumns): GeocodeOutcome {
  const match = matchOf(r.detail);
  if (r.longitude !== null && r.latitude !== null)
    return {
      location: { longitude: r.longitude, latitude: r.latitude },
      confidence: r.confidence ?? 0,
      ...(match ? { match } : {}),
    };
  const lowConfidence = (r.detail as OutcomeDetail | null)?.lowConfidence === true;
  return {
    failure: r.failure ?? 'not found',
    ...(lowConfidence ? { lowConfidence, confidence: r.confidence ?? 0 } : {}),
    ...(match ? { match } : {}),
  };
}

function detailOf(outcome: GeocodeOutcome): string | null {
  const detail: OutcomeDetail = {};
  if (outcome.match) detail.match = outcome.match;
  if ('failure' in outcome && outcome.lowConfidence) detail.lowConfidence = true;
  return Object.keys(detail).length ? JSON.stringify(detail) : null;
}

/** `unnest` input for (key, longitude, latitude, confidence, failure, detail) columns. */
export function outcomeRows(results: Map<string, GeocodeOutcome>) {
  return sql.unnest(
    [...results.entries()].map(([key, outcome]) =>
      'location' in outcome
        ? [
            key,
            outcome.location.longitude,
            outcome.location.latitude,
            outcome.confidence,
            null,
            detailOf(outcome),
          ]
        : [key, null, null, outcome.confidence ?? null, outcome.failure, detailOf(outcome)],
    ),
    ['text', 'float8', 'float8', 'float4', 'text', 'jsonb'],
  );
}

export function postgresGeocodeCache(pool: DatabasePool): GeocodeCache {
  return {
    async get(provider, queries) {
      const found = new Map<string, GeocodeOutcome>();
      if (queries.length === 0) return found;
      const rows = await pool.any(sql.type(CacheRow)`
        select query, longitude, latitude, confidence, failure, detail from geocode_cache
        where provider = ${provider} and query = any(${sql.array(queries, 'text')})`);
      for (const r of rows) found.set(r.query, outcomeFromRow(r));
      return found;
    },
    async put(provider, results) {
      if (results.size === 0) return;
      await pool.query(sql.unsafe`
        insert into geocode_cache (provider, query, longitude, latitude, confidence, failure, detail)
        select ${provider}, * from ${outcomeRows(results)}
        on conflict (provider, query) do nothing`);
    },
  };
}
