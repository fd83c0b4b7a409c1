import type { GeocodeOutcome } from './geocoder.ts';
import type { Progress } from './ingest-job-store.ts';

/**
 * The geocoder's answers for one job's addresses, stored batch by batch with geocode-batch's progress
 * (a resumed stage asks only for the rest) and read by create-events.
 */
export interface JobGeocodes {
  jobGeocodes(jobId: number): Promise<Map<string, GeocodeOutcome>>;
  saveJobGeocodes(jobId: number, results: Map<string, GeocodeOutcome>, progress: Progress): Promise<void>;
}
