import type { Location } from '../../domain/read/events.ts';
import type { GeocodeMatch } from '../../domain/ingest/geocoding/located-by.ts';
import type { ScoredCandidate } from '../../domain/ingest/geocoding/resolve-address.ts';

/**
 * A geocoder's answer for one address: a location, or the reason there is none. `match` says what was
 * matched (provider, name, country, region); `lowConfidence` marks a place found but refused because
 * its confidence is under the threshold (counted apart from "not found").
 */
export type GeocodeOutcome =
  | { location: Location; confidence: number; match?: GeocodeMatch }
  | { failure: string; lowConfidence?: boolean; confidence?: number; match?: GeocodeMatch };

/** Every candidate a provider looked at for one address (POST /api/geocoding/test). */
export type GeocodeExplanation = {
  provider: string;
  outcome: GeocodeOutcome;
  candidates: ScoredCandidate[];
};

/** Scheduled and scraper imports are held to a slower rate than imports a person waits for. */
export type GeocodeOptions = { scheduled?: boolean };

export interface Geocoder {
  /** Cache key of the provider (a geocoder's answers are cached per provider). */
  readonly name: string;
  /** Each distinct address once; failures (nothing found, low confidence, (0,0)) are outcomes, transient errors throw. */
  geocode(addresses: string[], options?: GeocodeOptions): Promise<Map<string, GeocodeOutcome>>;
  /** One address with every candidate considered, for an admin who wants to understand an answer. */
  explain(address: string): Promise<GeocodeExplanation[]>;
}
