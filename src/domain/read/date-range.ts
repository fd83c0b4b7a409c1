// The instants the service accepts: years 0001 to 9999. PostgreSQL's timestamptz reaches further
// back (4713 BC) but has no year 0, and ISO 8601 strings of the API have four-digit years.

const SUPPORTED_YEARS = { first: 1, last: 9999 } as const;

/** True when `millis` (since the epoch, UTC) falls in a supported year. */
export function isSupportedInstant(millis: number): boolean {
  if (!Number.isFinite(millis)) return false;
  const year = new Date(millis).getUTCFullYear();
  return year >= SUPPORTED_YEARS.first && year <= SUPPORTED_YEARS.last;
}

export function supportedRangeText(): string {
  return `years ${String(SUPPORTED_YEARS.first).padStart(4, '0')} to ${SUPPORTED_YEARS.last}`;
}
