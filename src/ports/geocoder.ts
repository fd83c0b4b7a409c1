import type { Location } from '../domain/events.ts';

export type GeocodeOutcome = { location: Location; confidence: number } | { failure: string };

export interface Geocoder {
  /** Cache key of the provider (a geocoder's answers are cached per provider). */
  readonly name: string;
  /** Each distinct address once; failures (nothing found, low confidence, (0,0)) are outcomes, transient errors throw. */
  geocode(addresses: string[]): Promise<Map<string, GeocodeOutcome>>;
}
