import type { SchemaDrift } from './schema.ts';

// When an automated import (scheduled, webhook, scraper) stops for a human decision. Manual uploads
// skip this: their user chose the settings moments ago.

const REVIEW_THRESHOLDS = {
  duplicateRate: 0.5,
  invalidRowRate: 0.1,
  geocodingFailureRate: 0.3,
};

export function reviewReasons(input: {
  rowsTotal: number;
  duplicates: number;
  invalidRows: number;
  drift: SchemaDrift | null;
}): string[] {
  const reasons: string[] = [];
  const drift = input.drift;
  if (drift && (drift.added.length || drift.removed.length || drift.changed.length)) {
    reasons.push(`schema drift${drift.breaking ? ' (breaking)' : ''}`);
  }
  const rate = (n: number) => (input.rowsTotal === 0 ? 0 : n / input.rowsTotal);
  if (rate(input.duplicates) > REVIEW_THRESHOLDS.duplicateRate) {
    reasons.push(
      `duplicate rate ${Math.round(rate(input.duplicates) * 100)}% over ${REVIEW_THRESHOLDS.duplicateRate * 100}%`,
    );
  }
  if (rate(input.invalidRows) > REVIEW_THRESHOLDS.invalidRowRate) {
    reasons.push(
      `invalid rows ${Math.round(rate(input.invalidRows) * 100)}% over ${REVIEW_THRESHOLDS.invalidRowRate * 100}%`,
    );
  }
  return reasons;
}

export function geocodingReviewReason(addresses: number, failed: number): string | null {
  if (addresses === 0) return null;
  const rate = failed / addresses;
  return rate > REVIEW_THRESHOLDS.geocodingFailureRate
    ? `geocoding failure rate ${Math.round(rate * 100)}% over ${REVIEW_THRESHOLDS.geocodingFailureRate * 100}%`
    : null;
}
