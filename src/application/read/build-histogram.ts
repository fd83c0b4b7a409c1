import {
  autoGranularity,
  type Bucket,
  bucketCount,
  calendarFloor,
  calendarNext,
  chooseBucketSize,
  fillBuckets,
  type HistogramPlan,
  parseHistogramPlan,
} from '../../domain/read/histogram.ts';
import { type EventFilter, parseEventFilter, type RawQuery } from '../../domain/read/read-query.ts';
import type { Bins, EventReader, Viewer } from '../../ports/read/event-reader.ts';

type Histogram = {
  histogram: Bucket[];
  metadata: {
    total: number;
    dateRange: { min: string | null; max: string | null };
    /** Absent in the earlier variant (`granularity`), which the spec shapes without them. */
    bucketSizeSeconds?: number | null;
    bucketCount?: number;
    counts: { datasets: number; catalogs: number };
    topDatasets: string[];
    topCatalogs: string[];
  };
};

const TOP = 5;

/**
 * GET /api/v1/events/temporal: contiguous half-open buckets from the one holding the first matching
 * event to the one holding the last, empty buckets included.
 */
export async function buildHistogram(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<Histogram> {
  const filter = parseEventFilter(query);
  const plan = parseHistogramPlan(query);
  // The bins need the first and last instants; the per-dataset counts do not, so they run beside
  // both (three statements, two at a time: the slowest, a box's histogram, no longer waits for them).
  const [binned, perDataset] = await Promise.all([
    deps.events.timeRange(viewer, filter).then((range) => bin(deps, viewer, filter, plan, range)),
    deps.events.countByDataset(viewer, filter),
  ]);
  const total = perDataset.reduce((sum, item) => sum + item.count, 0);
  const catalogs = new Map<number, { title: string; count: number }>();
  for (const item of perDataset) {
    const catalog = catalogs.get(item.catalogId) ?? { title: item.catalogTitle, count: 0 };
    catalog.count += item.count;
    catalogs.set(item.catalogId, catalog);
  }
  return {
    histogram: binned.histogram,
    metadata: {
      total,
      dateRange: { min: binned.range?.min ?? null, max: binned.range?.max ?? null },
      counts: { datasets: perDataset.length, catalogs: catalogs.size },
      topDatasets: perDataset.slice(0, TOP).map((item) => item.datasetTitle),
      topCatalogs: [...catalogs.values()]
        .sort((a, b) => b.count - a.count)
        .slice(0, TOP)
        .map((catalog) => catalog.title),
      ...(plan.kind === 'fixed'
        ? { bucketSizeSeconds: binned.bucketSizeSeconds, bucketCount: binned.histogram.length }
        : {}),
    },
  };
}

type Range = Awaited<ReturnType<EventReader['timeRange']>>;

/** The buckets from the one holding the first instant of `range` to the one holding its last. */
async function bin(
  deps: { events: EventReader },
  viewer: Viewer,
  filter: EventFilter,
  plan: HistogramPlan,
  range: Range,
): Promise<{ range: Range; histogram: Bucket[]; bucketSizeSeconds: number | null }> {
  if (!range) return { range, histogram: [], bucketSizeSeconds: null };
  const first = Math.floor(Date.parse(range.min) / 1000);
  const last = Math.floor(Date.parse(range.max) / 1000);
  if (plan.kind === 'fixed') {
    const size = chooseBucketSize(first, last, plan.targets);
    const origin = Math.floor(first / size) * size;
    const bins: Bins = { kind: 'fixed', originSeconds: origin, sizeSeconds: size };
    const counts = await deps.events.histogram(viewer, filter, bins);
    const lastStart = origin + (bucketCount(first, last, size) - 1) * size;
    return {
      range,
      histogram: fillBuckets({ first: origin, last: lastStart }, (start) => start + size, counts),
      bucketSizeSeconds: size,
    };
  }
  const granularity = plan.granularity === 'auto' ? autoGranularity(first, last) : plan.granularity;
  const counts = await deps.events.histogram(viewer, filter, { kind: 'calendar', granularity });
  return {
    range,
    histogram: fillBuckets(
      { first: calendarFloor(first, granularity), last: calendarFloor(last, granularity) },
      (start) => calendarNext(start, granularity),
      counts,
    ),
    bucketSizeSeconds: granularity === 'day' ? 86_400 : granularity === 'week' ? 604_800 : null,
  };
}
