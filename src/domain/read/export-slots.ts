import { rateRefusal, type RateRefusal } from '../accounts/rate-limits.ts';

// Exports read every matching event and stream it for as long as the client takes: eight parallel
// anonymous 310 MB GeoJSON exports held eight connections and their statements at once (issue 30 §3).
// Each client (an account, or an address for anonymous callers) may run a few at a time; one more is
// refused with the spec's 429 until one of its exports ends.

/** Exports one client may run at the same time, per API process. */
export const EXPORTS_PER_CLIENT = 2;

/** Seconds a refused client is told to wait: an export frees its place as soon as it ends. */
const RETRY_AFTER_SECONDS = 5;

/** The refusal of one more export for a client running `running` already, or null when it may start. */
export function exportSlotRefusal(
  running: number,
  now: Date,
  limit = EXPORTS_PER_CLIENT,
): RateRefusal | null {
  if (running < limit) return null;
  // limitType is the spec's shortest window: a place frees within an export, not an hour or a day.
  return rateRefusal('burst', limit, new Date(now.getTime() + RETRY_AFTER_SECONDS * 1000), now);
}
