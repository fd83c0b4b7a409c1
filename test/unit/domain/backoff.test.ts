import t from 'tap';
import { backoffMs } from '../../../src/domain/backoff.ts';

// The outboxes' one retry wait (src/domain/backoff.ts): e-mail passes no jitter, webhooks do.

t.test('exponential from the base, capped at an hour', async (t) => {
  t.equal(backoffMs(1, 30_000), 30_000, 'the first wait is the base');
  t.equal(backoffMs(3, 30_000), 120_000, 'doubling');
  t.equal(backoffMs(0, 30_000), 30_000, 'no attempt yet: the base, never less');
  t.equal(backoffMs(40, 30_000), 3_600_000, 'capped');
});

t.test('a jitter share spreads the wait over its upper half', async (t) => {
  t.equal(backoffMs(2, 5_000, 0), 5_000, 'half of the ceiling at the least');
  t.equal(backoffMs(2, 5_000, 1), 10_000, 'the ceiling at the most');
  t.equal(backoffMs(2, 5_000, 0.5), 7_500);
});
