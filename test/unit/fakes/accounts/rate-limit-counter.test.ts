import t from 'tap';
import { rateLimitCounterContract } from '../../../contracts/accounts/rate-limit-counter.ts';
import { memoryRateLimitCounter, type RateLimitCounts } from '../../../fakes/accounts/rate-limit-counter.ts';

// The in-memory RateLimitCounter passes the port's behaviour suite (postgresRateLimitCounter passes
// the same one in test/integration/accounts/rate-limit-counter-contract.test.ts).
rateLimitCounterContract(t, async () => {
  const counts: RateLimitCounts = new Map();
  return { counter: memoryRateLimitCounter(counts), another: () => memoryRateLimitCounter(counts) };
});
