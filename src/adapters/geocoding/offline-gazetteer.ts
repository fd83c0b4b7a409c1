import { confidenceVerdict, DEFAULT_MIN_CONFIDENCE } from '../../domain/ingest/geocoding/confidence.ts';
import { type Resolution, resolveAddress } from '../../domain/ingest/geocoding/resolve-address.ts';
import type { GeocodeOutcome, Geocoder } from '../../ports/ingest/geocoder.ts';
import { gazetteerIndex } from './gazetteer-data.ts';

// The default geocoder: GeoNames' places of 1,000+ inhabitants with their alternate names, region and
// country names (gazetteer-data.ts), matched in memory by resolveAddress. No network, so it works
// offline and in tests; it finds towns, not street addresses.

const OFFLINE_PROVIDER = 'offline-geonames';

/** A resolution as an outcome: a place at or over the threshold, else the reason there is none. */
function outcomeOf(resolution: Resolution, minConfidence: number): GeocodeOutcome {
  const { best } = resolution;
  if (!best) return { failure: resolution.failure ?? 'no matching place' };
  const match = {
    provider: OFFLINE_PROVIDER,
    matchedName: best.matchedName,
    matchedCountry: best.matchedCountry,
    matchedRegion: best.matchedRegion,
  };
  if (confidenceVerdict(best.confidence, minConfidence) === 'low-confidence') {
    const inside = resolution.candidates.filter((c) => c.rejected === null).length;
    return {
      failure: `low confidence (${best.confidence}): ${inside} places match`,
      lowConfidence: true,
      confidence: best.confidence,
      match,
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
