import type { GeocodeOutcome } from './geocoder.ts';

/** Answers of a remote geocoder kept across jobs and processes, so each address is asked once. */
export interface GeocodeCache {
  get(provider: string, queries: string[]): Promise<Map<string, GeocodeOutcome>>;
  put(provider: string, results: Map<string, GeocodeOutcome>): Promise<void>;
}
