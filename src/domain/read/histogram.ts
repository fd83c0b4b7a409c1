import { invalid, parseInteger, type RawQuery } from './read-query.ts';

// Temporal histogram rules: how wide the buckets are, and the full list of contiguous half-open
// buckets [date, dateEnd) including the empty ones.

type BucketTargets = { target: number; min: number; max: number };
export type Granularity = 'day' | 'week' | 'month';
export type HistogramPlan =
  { kind: 'fixed'; targets: BucketTargets } | { kind: 'calendar'; granularity: Granularity | 'auto' };

export const MAX_BUCKETS = 500;
const DEFAULT_TARGETS: BucketTargets = { target: 30, min: 20, max: 50 };

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86_400;
/** Candidate bucket widths, in seconds: round numbers a reader recognises on a time axis. */
export const BUCKET_SIZES: readonly number[] = [
  1,
  5,
  10,
  15,
  30,
  MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
  14 * DAY,
  30 * DAY,
  60 * DAY,
  90 * DAY,
  180 * DAY,
  365 * DAY,
  2 * 365 * DAY,
  5 * 365 * DAY,
  10 * 365 * DAY,
  25 * 365 * DAY,
  50 * 365 * DAY,
  100 * 365 * DAY,
];

export function parseHistogramPlan(query: RawQuery): HistogramPlan {
  const granularity = query.granularity;
  const bucketParams = ['targetBuckets', 'minBuckets', 'maxBuckets'].filter(
    (name) => query[name] !== undefined && query[name] !== '',
  );
  if (granularity !== undefined && granularity !== '') {
    if (bucketParams.length > 0) {
      throw invalid('granularity', `granularity cannot be combined with ${bucketParams.join(', ')}`);
    }
    if (
      granularity === 'day' ||
      granularity === 'week' ||
      granularity === 'month' ||
      granularity === 'auto'
    ) {
      return { kind: 'calendar', granularity };
    }
    throw invalid(
      'granularity',
      `granularity must be day, week, month or auto (got "${String(granularity)}")`,
    );
  }
  const read = (name: string, fallback: number) =>
    parseInteger(query[name], name, { min: 1, max: MAX_BUCKETS, fallback });
  const given = (name: string) => bucketParams.includes(name);
  let min = read('minBuckets', DEFAULT_TARGETS.min);
  let max = read('maxBuckets', DEFAULT_TARGETS.max);
  const asked = given('targetBuckets') ? read('targetBuckets', DEFAULT_TARGETS.target) : null;
  // A bound the caller did not give moves to make room for what they did give: targetBuckets=100
  // alone means "about 100 buckets", not a contradiction with a default maximum of 50.
  if (!given('maxBuckets')) max = Math.max(max, min, asked ?? 0);
  if (!given('minBuckets')) min = Math.min(min, max, asked ?? Infinity);
  if (min > max) throw invalid('minBuckets', `minBuckets (${min}) must not exceed maxBuckets (${max})`);
  const target = asked ?? Math.min(max, Math.max(min, DEFAULT_TARGETS.target));
  if (target < min || target > max) {
    throw invalid(
      'targetBuckets',
      `targetBuckets (${target}) must be between minBuckets (${min}) and maxBuckets (${max})`,
    );
  }
  return { kind: 'fixed', targets: { target, min, max } };
}

/** Buckets needed to cover [first, last] with buckets of `size` aligned to multiples of `size` since the epoch. */
export function bucketCount(firstSeconds: number, lastSeconds: number, size: number): number {
  return Math.floor(lastSeconds / size) - Math.floor(firstSeconds / size) + 1;
}

/**
 * The bucket width for data spanning [first, last] (epoch seconds): among the round sizes, the one
 * whose bucket count is closest to the target while inside [min, max]; when no size lands inside
 * (a very short or a single-instant range), the one closest to the target.
 */
export function chooseBucketSize(firstSeconds: number, lastSeconds: number, targets: BucketTargets): number {
  let best: { size: number; score: number } | null = null;
  for (const size of BUCKET_SIZES) {
    const count = bucketCount(firstSeconds, lastSeconds, size);
    const inside = count >= targets.min && count <= targets.max;
    // Sizes inside the window always beat sizes outside it; then closeness to the target; ties go
    // to the wider bucket (fewer, fuller bars).
    const score = (inside ? 0 : 1_000_000) + Math.abs(count - targets.target);
    if (!best || score <= best.score) best = { size, score };
  }
  return best?.size ?? DAY;
}

/** Calendar granularity for `auto`: days up to two months, weeks up to two years, else months. */
export function autoGranularity(firstSeconds: number, lastSeconds: number): Granularity {
  const span = lastSeconds - firstSeconds;
  if (span <= 62 * DAY) return 'day';
  if (span <= 2 * 365 * DAY) return 'week';
  return 'month';
}

/** Start of the calendar bucket holding an instant (UTC; weeks start on Monday, as ISO 8601). */
export function calendarFloor(epochSeconds: number, granularity: Granularity): number {
  const date = new Date(epochSeconds * 1000);
  if (granularity === 'month') return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / 1000;
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()) / 1000;
  if (granularity === 'day') return day;
  const sinceMonday = (date.getUTCDay() + 6) % 7;
  return day - sinceMonday * DAY;
}

export function calendarNext(epochSeconds: number, granularity: Granularity): number {
  if (granularity === 'day') return epochSeconds + DAY;
  if (granularity === 'week') return epochSeconds + 7 * DAY;
  const date = new Date(epochSeconds * 1000);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / 1000;
}

export type Bucket = { date: string; dateEnd: string; count: number };

/** Every bucket from the one holding `first` to the one holding `last`, with zero counts filled in. */
export function fillBuckets(
  starts: { first: number; last: number },
  step: (start: number) => number,
  counts: Map<number, number>,
): Bucket[] {
  const buckets: Bucket[] = [];
  for (let start = starts.first; start <= starts.last; start = step(start)) {
    buckets.push({ date: iso(start), dateEnd: iso(step(start)), count: counts.get(start) ?? 0 });
    if (buckets.length > 100_000) throw new Error('histogram bucket list runaway');
  }
  return buckets;
}

function iso(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}
