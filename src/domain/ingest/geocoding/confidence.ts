// Confidence of a geocoded place, from 0 to 1 (see resolveAddress): below the low-confidence
// threshold the place is not used and the row is reported as low confidence, never silently placed.

/** The default threshold (GEOCODER_MIN_CONFIDENCE): two equally likely places give at most 0.475. */
export const DEFAULT_MIN_CONFIDENCE = 0.5;

type ConfidenceVerdict = 'located' | 'low-confidence';

/** The one threshold test, which both geocoders (offline and online) ask. */
export function confidenceVerdict(confidence: number, threshold: number): ConfidenceVerdict {
  return confidence < threshold ? 'low-confidence' : 'located';
}
