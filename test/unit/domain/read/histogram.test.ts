import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import {
  autoGranularity,
  BUCKET_SIZES,
  bucketCount,
  calendarFloor,
  calendarNext,
  chooseBucketSize,
  fillBuckets,
  parseHistogramPlan,
} from '../../../../src/domain/read/histogram.ts';

const DAY = 86_400;
const at = (iso: string) => Date.parse(iso) / 1000;

t.test('bucket parameters: defaults 30/20/50, each at most 500', async (t) => {
  t.same(parseHistogramPlan({}), { kind: 'fixed', targets: { target: 30, min: 20, max: 50 } });
  t.same(parseHistogramPlan({ targetBuckets: '100', maxBuckets: '500', minBuckets: '1' }), {
    kind: 'fixed',
    targets: { target: 100, min: 1, max: 500 },
  });
  t.same(
    parseHistogramPlan({ maxBuckets: '10', minBuckets: '5' }).kind,
    'fixed',
    'the default target is clamped',
  );
  for (const query of [
    { targetBuckets: '501' },
    { targetBuckets: '0' },
    { maxBuckets: '0' },
    { minBuckets: '60', maxBuckets: '50' },
    { targetBuckets: '10', minBuckets: '20' },
    { targetBuckets: '100', maxBuckets: '50' },
  ]) {
    t.throws(() => parseHistogramPlan(query), ValidationError, JSON.stringify(query));
  }
});

t.test('a bound the caller did not give widens to what they did give (issue 28 §8)', async (t) => {
  const targets = (query: Record<string, string>) => {
    const plan = parseHistogramPlan(query);
    return plan.kind === 'fixed' ? plan.targets : null;
  };
  t.same(targets({ targetBuckets: '10' }), { target: 10, min: 10, max: 50 }, 'below the default minimum');
  t.same(targets({ targetBuckets: '100' }), { target: 100, min: 20, max: 100 }, 'above the default maximum');
  t.same(targets({ targetBuckets: '500' }), { target: 500, min: 20, max: 500 }, 'up to the cap');
  t.same(targets({ targetBuckets: '1' }), { target: 1, min: 1, max: 50 }, 'down to one');
  t.same(
    targets({ minBuckets: '60' }),
    { target: 60, min: 60, max: 60 },
    'a minimum alone lifts the maximum',
  );
  t.same(
    targets({ maxBuckets: '10' }),
    { target: 10, min: 10, max: 10 },
    'a maximum alone lowers the minimum',
  );
  t.same(targets({ targetBuckets: '40', maxBuckets: '45' }), { target: 40, min: 20, max: 45 });
});

t.test('granularity: day, week, month, auto; not with bucket parameters', async (t) => {
  t.same(parseHistogramPlan({ granularity: 'week' }), { kind: 'calendar', granularity: 'week' });
  t.throws(() => parseHistogramPlan({ granularity: 'hour' }), ValidationError);
  t.throws(() => parseHistogramPlan({ granularity: 'day', targetBuckets: '10' }), ValidationError);
});

t.test('chooseBucketSize lands inside [min, max], close to the target', async (t) => {
  const targets = { target: 30, min: 20, max: 50 };
  const cases: Array<[string, string]> = [
    ['2016-01-01T00:00:00Z', '2025-12-31T23:59:59Z'],
    ['2024-01-01T00:00:00Z', '2024-01-31T00:00:00Z'],
    ['2024-01-01T00:00:00Z', '2024-01-01T06:00:00Z'],
    ['2024-03-01T10:00:00Z', '2024-03-01T10:00:40Z'],
  ];
  for (const [first, last] of cases) {
    const size = chooseBucketSize(at(first), at(last), targets);
    const count = bucketCount(at(first), at(last), size);
    t.ok(BUCKET_SIZES.includes(size));
    t.ok(count >= 20 && count <= 50, `${first}..${last}: ${size}s -> ${count} buckets`);
  }
  t.equal(chooseBucketSize(at('2024-01-01T00:00:00Z'), at('2024-01-31T00:00:00Z'), targets), DAY);
  const single = chooseBucketSize(at('2024-01-01T00:00:00Z'), at('2024-01-01T00:00:00Z'), targets);
  t.equal(
    bucketCount(at('2024-01-01T00:00:00Z'), at('2024-01-01T00:00:00Z'), single),
    1,
    'one instant: one bucket',
  );
});

t.test('auto granularity and calendar buckets', async (t) => {
  t.equal(autoGranularity(at('2024-01-01T00:00:00Z'), at('2024-02-15T00:00:00Z')), 'day');
  t.equal(autoGranularity(at('2024-01-01T00:00:00Z'), at('2024-12-15T00:00:00Z')), 'week');
  t.equal(autoGranularity(at('2016-01-01T00:00:00Z'), at('2024-12-15T00:00:00Z')), 'month');
  t.equal(calendarFloor(at('2024-05-15T13:00:00Z'), 'day'), at('2024-05-15T00:00:00Z'));
  t.equal(
    calendarFloor(at('2024-05-15T13:00:00Z'), 'week'),
    at('2024-05-13T00:00:00Z'),
    'weeks start on Monday',
  );
  t.equal(
    calendarFloor(at('2024-05-19T23:00:00Z'), 'week'),
    at('2024-05-13T00:00:00Z'),
    'Sunday is the end of a week',
  );
  t.equal(calendarFloor(at('2024-05-15T13:00:00Z'), 'month'), at('2024-05-01T00:00:00Z'));
  t.equal(calendarNext(at('2024-01-01T00:00:00Z'), 'month'), at('2024-02-01T00:00:00Z'));
  t.equal(calendarNext(at('2024-12-01T00:00:00Z'), 'month'), at('2025-01-01T00:00:00Z'));
});

t.test('fillBuckets: contiguous, half-open, empty buckets present', async (t) => {
  const counts = new Map([
    [at('2024-01-01T00:00:00Z'), 2],
    [at('2024-01-03T00:00:00Z'), 5],
  ]);
  const buckets = fillBuckets(
    { first: at('2024-01-01T00:00:00Z'), last: at('2024-01-03T00:00:00Z') },
    (start) => start + DAY,
    counts,
  );
  t.same(buckets, [
    { date: '2024-01-01T00:00:00.000Z', dateEnd: '2024-01-02T00:00:00.000Z', count: 2 },
    { date: '2024-01-02T00:00:00.000Z', dateEnd: '2024-01-03T00:00:00.000Z', count: 0 },
    { date: '2024-01-03T00:00:00.000Z', dateEnd: '2024-01-04T00:00:00.000Z', count: 5 },
  ]);
});
