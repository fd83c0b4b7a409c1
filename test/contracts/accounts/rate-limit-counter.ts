import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import type { RateWindow } from '../../../src/domain/accounts/quotas.ts';
import type { RateLimitCounter } from '../../../src/ports/accounts/rate-limit-counter.ts';

// What every RateLimitCounter does, as one suite: run against the in-memory fake
// (test/unit/fakes/accounts/rate-limit-counter.test.ts) and against postgresRateLimitCounter
// (test/integration/accounts/rate-limit-counter-contract.test.ts). The windows are those of the
// policy's shape; the limits are small (every hit counted at once in the database) or large (hits
// batched in memory first): the counts are the same either way.

/** A counter, and another over the same storage (another API process on the same database). */
export type MakeRateLimitCounter = () => Promise<{ counter: RateLimitCounter; another(): RateLimitCounter }>;

const BURST: RateWindow = { name: 'burst', seconds: 60, limit: 5 };
const HOURLY: RateWindow = { name: 'hourly', seconds: 3600, limit: 1000 };
const AT = new Date('2030-01-01T12:00:30.000Z');
const key = (name: string) => `contract-${name}-${randomUUID()}`;
const hitsOf = async (counter: RateLimitCounter, k: string, windows: RateWindow[], now = AT, amount = 1) =>
  (await counter.hit(k, windows, now, amount)).map((c) => c.hits);

export function rateLimitCounterContract(t: Test, make: MakeRateLimitCounter): void {
  t.test('each hit is counted in every window, and the counts come back in their order', async (t) => {
    const { counter } = await make();
    const k = key('count');
    t.same(await counter.hit(k, [BURST, HOURLY], AT), [
      { window: BURST, hits: 1 },
      { window: HOURLY, hits: 1 },
    ]);
    t.same(await hitsOf(counter, k, [BURST, HOURLY]), [2, 2]);
    t.same(await hitsOf(counter, k, [HOURLY]), [3], 'a window counts whatever else is asked with it');
    t.same(await hitsOf(counter, k, [BURST, HOURLY]), [3, 4]);
    t.same(await counter.hit(k, [], AT), [], 'no window, no count');
    await counter.flush();
  });

  t.test('a hit of an amount counts that many in every window, near a limit and far from it', async (t) => {
    const { counter } = await make();
    const k = key('amount');
    t.same(await hitsOf(counter, k, [HOURLY], AT, 10), [10], 'far from the limit (batched)');
    t.same(
      await hitsOf(counter, k, [BURST, HOURLY], AT, 3),
      [3, 13],
      'near the small limit (written at once)',
    );
    t.same(await hitsOf(counter, k, [HOURLY]), [14], 'a plain hit is one');
    t.same(await hitsOf(counter, k, [HOURLY], AT, 1000), [1014], 'past the limit, still counted');
    await counter.flush();
  });

  t.test('hits past the limit are still counted, so the caller can refuse them', async (t) => {
    const { counter } = await make();
    const k = key('over');
    const seen = [];
    for (let i = 0; i < BURST.limit + 2; i += 1) seen.push(...(await hitsOf(counter, k, [BURST])));
    t.same(seen, [1, 2, 3, 4, 5, 6, 7]);
    await counter.flush();
  });

  t.test('keys are counted apart', async (t) => {
    const { counter } = await make();
    const [a, b] = [key('a'), key('b')];
    await counter.hit(a, [BURST], AT);
    await counter.hit(a, [BURST], AT);
    t.same(await hitsOf(counter, b, [BURST]), [1]);
    t.same(await hitsOf(counter, a, [BURST]), [3]);
    await counter.flush();
  });

  t.test('a window starts again at the next multiple of its length', async (t) => {
    const { counter } = await make();
    const k = key('windows');
    await counter.hit(k, [BURST, HOURLY], new Date('2030-01-01T12:00:00.000Z'));
    await counter.hit(k, [BURST, HOURLY], new Date('2030-01-01T12:00:59.999Z'));
    t.same(
      await hitsOf(counter, k, [BURST, HOURLY], new Date('2030-01-01T12:01:00.000Z')),
      [1, 3],
      'a new minute, the same hour',
    );
    t.same(await hitsOf(counter, k, [BURST, HOURLY], new Date('2030-01-01T13:00:00.000Z')), [1, 1]);
    await counter.flush();
  });

  t.test('hits at once near a limit: each is counted, and exactly the limit stay within it', async (t) => {
    const { counter } = await make();
    const k = key('near');
    const counts = await Promise.all(Array.from({ length: 12 }, () => hitsOf(counter, k, [BURST])));
    t.equal(counts.filter(([hits]) => (hits ?? 0) <= BURST.limit).length, BURST.limit);
    t.same(await hitsOf(counter, k, [BURST]), [13]);
    await counter.flush();
  });

  t.test('hits at once far from a limit are all counted', async (t) => {
    const { counter } = await make();
    const k = key('far');
    await Promise.all(Array.from({ length: 40 }, () => counter.hit(k, [HOURLY], AT)));
    t.same(await hitsOf(counter, k, [HOURLY]), [41]);
    await counter.flush();
  });

  t.test('after a flush, another counter on the same storage counts on from there', async (t) => {
    const { counter, another } = await make();
    const k = key('shared');
    for (let i = 0; i < 3; i += 1) await counter.hit(k, [HOURLY], AT);
    await counter.flush();
    const other = another();
    t.same(await hitsOf(other, k, [HOURLY]), [4]);
    await other.flush();
  });
}
