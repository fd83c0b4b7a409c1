import t, { type Test } from 'tap';
import { ConcurrencyLedger } from '../../../../src/domain/accounts/concurrency.ts';
import {
  type ConcurrencyPolicy,
  parseConcurrencyPolicy,
} from '../../../../src/domain/accounts/concurrency-policy.ts';
import { RateLimitedError } from '../../../../src/domain/accounts/rate-limits.ts';
import type { TrustLevel } from '../../../../src/domain/accounts/users.ts';

// Issue 30 §2: the places of costly requests per client and for the low-trust share, as one rule for
// the collection lists, the costly reads and the exports.

const policy: ConcurrencyPolicy = {
  lowTrustLevel: 0,
  classes: {
    collections: { perAddress: 2, perAccount: 3, lowTrustShare: 3 },
    reads: { perAddress: 1, perAccount: 1, lowTrustShare: null },
    exports: { perAddress: 2, perAccount: 2, lowTrustShare: 4 },
  },
};
const now = new Date('2026-11-28T00:00:00Z');
const anonymous = (address: string) => ({ viewer: null, address });
const account = (id: number, trustLevel: TrustLevel = 1, role: 'user' | 'admin' = 'user') => ({
  viewer: { id, email: `u${id}@example.org`, role, trustLevel },
  address: '10.0.0.9',
});

function refusal(t: Test, run: () => unknown): RateLimitedError {
  try {
    run();
  } catch (error) {
    t.ok(error instanceof RateLimitedError, 'the spec 429');
    return error as RateLimitedError;
  }
  throw new Error('expected a refusal');
}

t.test('an address holds at most perAddress places; one more is a 429 until one is given back', async (t) => {
  const ledger = new ConcurrencyLedger(policy);
  const first = ledger.take('collections', anonymous('10.0.0.1'), now);
  ledger.take('collections', anonymous('10.0.0.1'), now);
  const refused = refusal(t, () => ledger.take('collections', anonymous('10.0.0.1'), now));
  t.equal(refused.code, 'TOO_MANY_CONCURRENT_REQUESTS');
  t.match(refused.message, /at most 2 per client/);
  t.match(refused.decision, { limitType: 'burst', limit: 2, retryAfterSeconds: 2 });
  first();
  first(); // twice gives back one place only
  t.equal(ledger.held('collections', 'ip:10.0.0.1'), 1);
  ledger.take('collections', anonymous('10.0.0.1'), now);
  t.equal(ledger.held('collections', 'ip:10.0.0.1'), 2);
});

t.test(
  'anonymous callers and low-trust accounts share lowTrustShare; others are not held back',
  async (t) => {
    const ledger = new ConcurrencyLedger(policy);
    ledger.take('collections', anonymous('10.0.0.1'), now);
    ledger.take('collections', anonymous('10.0.0.2'), now);
    ledger.take('collections', account(7, 0), now);
    t.equal(ledger.sharedInUse('collections'), 3);
    const refused = refusal(t, () => ledger.take('collections', anonymous('10.0.0.3'), now));
    t.equal(refused.code, 'ANONYMOUS_SHARE_FULL');
    t.match(refused.message, /together they run at most 3/);
    refusal(t, () => ledger.take('collections', account(8, 0), now));
    // A level-1 account has its own places whatever the share holds.
    for (let i = 0; i < 3; i++) ledger.take('collections', account(9, 1), now);
    t.equal(
      refusal(t, () => ledger.take('collections', account(9, 1), now)).code,
      'TOO_MANY_CONCURRENT_REQUESTS',
    );
    // Classes are counted apart.
    ledger.take('exports', anonymous('10.0.0.3'), now);
  },
);

t.test('admins and level 5 are never limited; exports keep their code', async (t) => {
  const ledger = new ConcurrencyLedger(policy);
  for (let i = 0; i < 10; i++) {
    ledger.take('reads', account(1, 1, 'admin'), now);
    ledger.take('reads', account(2, 5), now);
  }
  ledger.take('exports', account(3), now);
  ledger.take('exports', account(3), now);
  const refused = refusal(t, () => ledger.take('exports', account(3), now));
  t.equal(refused.code, 'TOO_MANY_EXPORTS');
  t.match(refused.message, /Too many exports at once: at most 2 per client/);
  t.equal(refused.decision.retryAfterSeconds, 5);
});

t.test('the quotas file section: numbers, unlimited and none; mistakes named', async (t) => {
  const limits = { perAddress: 2, perAccount: 'unlimited', lowTrustShare: 4 };
  t.same(
    parseConcurrencyPolicy({ lowTrustLevel: 'none', collections: limits, reads: limits, exports: limits }),
    {
      lowTrustLevel: null,
      classes: {
        collections: { perAddress: 2, perAccount: null, lowTrustShare: 4 },
        reads: { perAddress: 2, perAccount: null, lowTrustShare: 4 },
        exports: { perAddress: 2, perAccount: null, lowTrustShare: 4 },
      },
    },
  );
  const bad: Array<[unknown, RegExp]> = [
    [{ lowTrustLevel: 5, collections: limits, reads: limits, exports: limits }, /lowTrustLevel/],
    [
      { lowTrustLevel: 0, collections: limits, reads: limits },
      /concurrentRequests.exports must be a mapping/,
    ],
    [
      { lowTrustLevel: 0, collections: { ...limits, perAddress: 0 }, reads: limits, exports: limits },
      /collections.perAddress must be a whole number >= 1/,
    ],
    [
      { lowTrustLevel: 0, collections: limits, reads: limits, exports: limits, tiles: limits },
      /unknown key tiles/,
    ],
  ];
  for (const [input, message] of bad) t.throws(() => parseConcurrencyPolicy(input), { message });
});
