import type { DateRange } from './read-query.ts';

// Splitting a half-open date range into whole UTC calendar periods (years, then months, then days)
// and the leftover pieces at the ends: precomputed counts per period answer the whole periods, rows
// answer the leftovers. Open ends (null) extend to the earliest or latest period.

export type Grain = 'year' | 'month' | 'day';
export type PeriodSpan = { grain: Grain; from: string | null; to: string | null };

type RangeSplit = {
  /** Whole periods of a grain: every period starting in [from, to). */
  periods: PeriodSpan[];
  /** What is left, for the rows; never open-ended. */
  rest: Array<{ from: string; to: string }>;
};

/** `grains` from coarsest to finest, e.g. ['year', 'month', 'day']. */
export function splitRange(range: DateRange, grains: Grain[]): RangeSplit {
  const split: RangeSplit = { periods: [], rest: [] };
  place(range.from, range.to, grains, split);
  return split;
}

function place(from: string | null, to: string | null, grains: Grain[], split: RangeSplit): void {
  if (from !== null && to !== null && from >= to) return;
  const [grain, ...finer] = grains;
  if (!grain) {
    if (from === null || to === null) throw new Error('an open range needs a grain');
    split.rest.push({ from, to });
    return;
  }
  const first = from === null ? null : ceilPeriod(from, grain);
  const end = to === null ? null : floorPeriod(to, grain);
  if (first !== null && end !== null && first >= end) {
    place(from, to, finer, split);
    return;
  }
  split.periods.push({ grain, from: first, to: end });
  if (from !== null && first !== null && from < first) place(from, first, finer, split);
  if (to !== null && end !== null && end < to) place(end, to, finer, split);
}

/**
 * Date.prototype.toISOString's own form for the years 1000-9999 (as parseDate and these functions
 * write every instant): its periods are prefixes of the text, without parsing it (three Date
 * round trips per end of a range were a seventh of the CPU for building an /events page statement).
 * Other years (Date.UTC reads 0-99 as 1900-1999; +010000) take the Date arithmetic.
 */
const ISO_INSTANT = /^[1-9]\d{3}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export function floorPeriod(iso: string, grain: Grain): string {
  if (ISO_INSTANT.test(iso)) {
    if (grain === 'year') return `${iso.slice(0, 4)}-01-01T00:00:00.000Z`;
    if (grain === 'month') return `${iso.slice(0, 7)}-01T00:00:00.000Z`;
    return `${iso.slice(0, 10)}T00:00:00.000Z`;
  }
  const date = new Date(iso);
  const year = date.getUTCFullYear();
  if (grain === 'year') return new Date(Date.UTC(year, 0, 1)).toISOString();
  if (grain === 'month') return new Date(Date.UTC(year, date.getUTCMonth(), 1)).toISOString();
  return new Date(Date.UTC(year, date.getUTCMonth(), date.getUTCDate())).toISOString();
}

export function ceilPeriod(iso: string, grain: Grain): string {
  const floor = floorPeriod(iso, grain);
  if (floor === (ISO_INSTANT.test(iso) ? iso : new Date(iso).toISOString())) return floor;
  return nextPeriod(floor, grain);
}

export function nextPeriod(iso: string, grain: Grain): string {
  const date = new Date(iso);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  if (grain === 'year') return new Date(Date.UTC(year + 1, 0, 1)).toISOString();
  if (grain === 'month') return new Date(Date.UTC(year, month + 1, 1)).toISOString();
  return new Date(Date.UTC(year, month, date.getUTCDate() + 1)).toISOString();
}

/**
 * The start of every period of a closed span, in order; null when the span is open at an end or
 * holds more than `max` periods (then a range condition reads about as little).
 */
export function periodStarts(span: PeriodSpan, max: number): string[] | null {
  if (span.from === null || span.to === null) return null;
  const starts: string[] = [];
  for (let start = span.from; start < span.to; start = nextPeriod(start, span.grain)) {
    if (starts.length === max) return null;
    starts.push(start);
  }
  return starts;
}
