import { confidenceVerdict, DEFAULT_MIN_CONFIDENCE } from '../../domain/ingest/geocoding/confidence.ts';
import { type Resolution, resolveAddress } from '../../domain/ingest/geocoding/resolve-address.ts';
import { type GeocodeMatch, MAX_ALTERNATIVES } from '../../domain/ingest/geocoding/located-by.ts';
import type { GeocodeOutcome, Geocoder } from '../../ports/ingest/geocoder.ts';
import { gazetteerIndex } from './gazetteer-data.ts';

// The default geocoder: GeoNames' places of 1,000+ inhabitants with their alternate names, region and
// country names (gazetteer-data.ts), matched in memory by resolveAddress. No network, so it works
// offline and in tests; it finds towns, not street addresses.

const OFFLINE_PROVIDER = 'offline-geonames';

/**
 * A resolution as an outcome: a place at or over the threshold, else the reason there is none. The
 * match says how exactly the place stands for the address and how many places of the name fit; a
 * low-confidence answer lists the places it hesitated between.
 */
function outcomeOf(resolution: Resolution, minConfidence: number): GeocodeOutcome {
  const { best } = resolution;
  if (!best) return { failure: resolution.failure ?? 'no matching place' };
  const match: GeocodeMatch = {
    provider: OFFLINE_PROVIDER,
    matchedName: best.matchedName,
    matchedCountry: best.matchedCountry,
    matchedRegion: best.matchedRegion,
    precision: best.precision,
    candidateCount: best.candidateCount,
  };
  if (confidenceVerdict(best.confidence, minConfidence) === 'low-confidence') {
    const alternatives = resolution.candidates
      .filter((c) => c.rejected === null)
      .slice(0, MAX_ALTERNATIVES)
      .map(({ name, country, region, latitude, longitude, population }) => ({
        name,
        country,
        region,
        latitude,
        longitude,
        population,
      }));
    return {
      failure: `low confidence (${best.confidence}): ${best.candidateCount} places match`,
      lowConfidence: true,
      confidence: best.confidence,
      match: { ...match, alternatives },
    };
  }
  return { location: best.location, confidence: best.confidence, match };
}

export function offlineGazetteer(
  options: { minConfidence: number } = { minConfidence: DEFAULT_MIN_CONFIDENCE },
): Geocoder {
  return {
    name: OFFLINE_PROVIDER,
    async geocode(addresses) {
      const index = gazetteerIndex();
      const results = new Map<string, GeocodeOutcome>();
      for (const address of addresses)
        results.set(address, outcomeOf(resolveAddress(index, address), options.minConfidence));
      return results;
    },
    async explain(address) {
      const resolution = resolveAddress(gazetteerIndex(), address);
      return [
        {
          provider: OFFLINE_PROVIDER,
          outcome: outcomeOf(resolution, options.minConfidence),
          candidates: resolution.candidates,
        },
      ];
    },
  };
}
