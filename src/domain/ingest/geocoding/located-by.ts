import type { ScoredCandidate } from './resolve-address.ts';

// How an event was located, as /api/v1/events shows it (`locatedBy`): by its own coordinates, or by
// the geocoder, with what it matched and how sure it was (docs/ingestion.md, "Reading a geocoding
// result").

/** How exactly a geocoded place stands for the address: the town, a street or venue in it, a region. */
type GeocodePrecision = 'city' | 'locality' | 'region';

/** One of the places an ambiguous address may mean (listed with a low-confidence answer). */
export type GeocodeAlternative = Pick<
  ScoredCandidate,
  'name' | 'country' | 'region' | 'latitude' | 'longitude' | 'population'
>;

export type GeocodeMatch = {
  /** The provider that answered: `offline-geonames`, or `nominatim:<url>` / `photon:<url>`. */
  provider: string;
  matchedName: string | null;
  /** ISO 3166-1 alpha-2 code. */
  matchedCountry: string | null;
  matchedRegion: string | null;
  /** Offline gazetteer only; absent in answers cached before it was recorded. */
  precision?: GeocodePrecision;
  /** Distinct places of the name inside the address's constraints (offline gazetteer only). */
  candidateCount?: number;
  /** For a low-confidence answer: the places it hesitated between, best first (at most MAX_ALTERNATIVES). */
  alternatives?: GeocodeAlternative[];
};

export const MAX_ALTERNATIVES = 5;

export type LocatedByGeocoder = Omit<GeocodeMatch, 'alternatives' | 'precision' | 'candidateCount'> & {
  method: 'geocoded';
  /** The address that was looked up. */
  address: string;
  confidence: number;
  /** null when the provider does not say (online providers, answers cached before it was recorded). */
  precision: GeocodePrecision | null;
  candidateCount: number | null;
};

/** The record kept on an event a geocoder located (an answer without a match is an older cache row). */
export function locatedByGeocoder(
  address: string,
  outcome: { confidence: number; match?: GeocodeMatch },
): LocatedByGeocoder {
  return {
    method: 'geocoded',
    address,
    confidence: outcome.confidence,
    provider: outcome.match?.provider ?? 'unknown',
    matchedName: outcome.match?.matchedName ?? null,
    matchedCountry: outcome.match?.matchedCountry ?? null,
    matchedRegion: outcome.match?.matchedRegion ?? null,
    precision: outcome.match?.precision ?? null,
    candidateCount: outcome.match?.candidateCount ?? null,
  };
}
