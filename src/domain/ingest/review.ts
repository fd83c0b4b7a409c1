import { describeDrift, driftHasChanges, type SchemaDrift } from './schema.ts';
import { ValidationError } from '../errors.ts';

// When an automated import (scheduled, webhook, scraper) stops for a human decision. Manual uploads
// skip this: their user chose the settings moments ago.

const REVIEW_THRESHOLDS = {
  duplicateRate: 0.5,
  invalidRowRate: 0.1,
  geocodingFailureRate: 0.3,
};

/**
 * A recurring source's (schedule's, scraper's) setting for the duplicate-rate review: `first-run`
 * (the default) reviews rows already stored only until one import of the source into its dataset
 * completed, `always` on every run, `never` not at all.
 */
export const REVIEW_DUPLICATES = ['first-run', 'always', 'never'] as const;
export type ReviewDuplicates = (typeof REVIEW_DUPLICATES)[number];

/**
 * Which duplicates one import's rate counts: `all` (rows repeated in the file and rows the dataset
 * holds already), `internal` (only rows repeated in the file) or `none`.
 */
export type DuplicateReview = 'all' | 'internal' | 'none';

/**
 * The duplicate review of one run of a recurring source. Rows the dataset already holds are news
 * only on the source's first import there (a dataset filled from elsewhere, a wrong target): later
 * runs of an unchanged feed find every row stored by the runs before, write nothing twice, and must
 * not stop for a person each time. Rows repeated inside the file say the file itself is odd, on any run.
 */
export function duplicateReviewFor(setting: ReviewDuplicates, importedBefore: boolean): DuplicateReview {
  if (setting === 'never') return 'none';
  if (setting === 'always' || !importedBefore) return 'all';
  return 'internal';
}

/** The API's `reviewDuplicates` value: one of REVIEW_DUPLICATES, or the default when absent. */
export function parseReviewDuplicates(value: unknown): ReviewDuplicates {
  if (value === undefined || value === null) return 'first-run';
  if (typeof value === 'string' && (REVIEW_DUPLICATES as readonly string[]).includes(value))
    return value as ReviewDuplicates;
  throw new ValidationError(`reviewDuplicates must be one of ${REVIEW_DUPLICATES.join(', ')}`, {
    field: 'reviewDuplicates',
  });
}

const percent = (rate: number) => `${Math.round(rate * 100)}%`;

export function reviewReasons(input: {
  rowsTotal: number;
  /** Rows whose id repeats an earlier row of the same file. */
  internal: number;
  /** Rows whose id the target dataset holds already. */
  external: number;
  /** Absent on jobs created before sources chose it: every duplicate counts, as it did then. */
  duplicateReview?: DuplicateReview | undefined;
  invalidRows: number;
  drift: SchemaDrift | null;
}): string[] {
  const reasons: string[] = [];
  const drift = input.drift;
  if (drift && driftHasChanges(drift)) {
    reasons.push(`schema drift${drift.breaking ? ' (breaking)' : ''}: ${describeDrift(drift)}`);
  }
  const rate = (n: number) => (input.rowsTotal === 0 ? 0 : n / input.rowsTotal);
  const counted = input.duplicateReview ?? 'all';
  const duplicates =
    counted === 'none' ? 0 : counted === 'internal' ? input.internal : input.internal + input.external;
  if (rate(duplicates) > REVIEW_THRESHOLDS.duplicateRate) {
    const parts = [
      input.internal ? `${input.internal} repeated in the file` : null,
      counted === 'all' && input.external ? `${input.external} already in the dataset` : null,
    ].filter((part) => part !== null);
    reasons.push(
      `duplicate rate ${percent(rate(duplicates))} over ${percent(REVIEW_THRESHOLDS.duplicateRate)}: ${parts.join(', ')} of ${input.rowsTotal} rows`,
    );
  }
  if (rate(input.invalidRows) > REVIEW_THRESHOLDS.invalidRowRate) {
    reasons.push(
      `invalid rows ${percent(rate(input.invalidRows))} over ${percent(REVIEW_THRESHOLDS.invalidRowRate)}: ${input.invalidRows} of ${input.rowsTotal} rows`,
    );
  }
  return reasons;
}

export function geocodingReviewReason(addresses: number, failed: number): string | null {
  if (addresses === 0) return null;
  const rate = failed / addresses;
  return rate > REVIEW_THRESHOLDS.geocodingFailureRate
    ? `geocoding failure rate ${percent(rate)} over ${percent(REVIEW_THRESHOLDS.geocodingFailureRate)}: ${failed} of ${addresses} addresses not located`
    : null;
}
