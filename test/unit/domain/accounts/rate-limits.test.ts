import t from 'tap';
import type { RateWindow } from '../../../../src/domain/accounts/quotas.ts';
import {
  decideRate,
  pageCost,
  windowReset,
  windowStart,
} from '../../../../src/domain/accounts/rate-limits.ts';

const burst: RateWindow = { name: 'burst', seconds: 10, limit: 5 };
const hourly: RateWindow = { name: 'hourly', seconds: 3600, limit: 100 };
const daily: RateWindow = { name: 'daily', seconds: 86400, limit: 1000 };
const now = new Date('2030-03-04T05:06:07.890Z');

t.test('fixed windows', async (t) => {
  t.same(windowStart(burst, now), new Date('2030-03-04T05:06:00.000Z'));
  t.same(windowReset(burst, now), new Date('2030-03-04T05:06:10.000Z'));
  t.same(windowReset(daily, now), new Date('2030-03-05T00:00:00.000Z'), 'daily windows end at midnight UTC');
});

t.test('allowed: the headers describe the window with the fewest requests left', async (t) => {
  t.same(
    decideRate(
      [
        { window: burst, hits: 2 },
        { window: hourly, hits: 99 },
      ],
      now,
    ),
    {
      allowed: true,
      window: 'hourly',
      limit: 100,
      remaining: 1,
      reset: new Date('2030-03-04T06:00:00.000Z'),
    },
  );
});

t.test('denied: the window that frees up last is named', async (t) => {
  t.same(decideRate([{ window: burst, hits: 6 }], now), {
    allowed: false,
    limitType: 'burst',
    limit: 5,
    remaining: 0,
    reset: new Date('2030-03-04T05:06:10.000Z'),
    retryAfterSeconds: 3,
  });
  const both = decideRate(
    [
      { window: burst, hits: 6 },
      { window: daily, hits: 1001 },
    ],
    now,
  );
  t.match(both, { allowed: false, limitType: 'daily', reset: new Date('2030-03-05T00:00:00.000Z') });
});

t.test(
  'a page costs the rows it may return, clamped to the cap, and never fewer than the minimum',
  async (t) => {
    const route = { defaultLimit: 100, maxLimit: 1000 };
    t.equal(pageCost(10, route, 10), 10, "GDAL's page of 10");
    t.equal(pageCost('250', route, 10), 250, 'a query string value');
    t.equal(pageCost(undefined, route, 10), 100, 'no limit: the default page');
    t.equal(pageCost(5000, route, 10), 1000, 'above the cap: what the route clamps it to');
    t.equal(pageCost(1, route, 10), 10, 'a tiny page still costs the minimum');
    t.equal(pageCost('x', route, 10), 100, 'not a number: the default (the schema refuses it before)');
  },
);
