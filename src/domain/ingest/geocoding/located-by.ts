// How an event was located, as /api/v1/events shows it (`locatedBy`): by its own coordinates, or by
// the geocoder, with what it matched and how sure it was (docs/ingestion.md, "Reading a geocoding
// result").

export type GeocodeMatch = {
  /** The provider that answered: `offline-geonames`, or `nominatim:<url>` / `photon:<url>`. */
  provider: string;
  matchedName: string | null;
  /** ISO 3166-1 alpha-2 code. */
  matchedCountry: string | null;
  matchedRegion: string | null;
};

export type LocatedByGeocoder = GeocodeMatch & {
  method: 'geocoded';
  /** The address that was looked up. */
  address: string;
  confidence: number;
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
  };
}
