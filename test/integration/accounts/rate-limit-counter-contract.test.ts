import t from 'tap';
import { postgresRateLimitCounter } from '../../../src/adapters/postgres/accounts/rate-limit-counter.ts';
import { rateLimitCounterContract } from '../../contracts/accounts/rate-limit-counter.ts';
import { testDatabase } from '../../helpers/database.ts';

// postgresRateLimitCounter passes the RateLimitCounter port's behaviour suite, the one the in-memory
// fake passes (test/unit/fakes/accounts/rate-limit-counter.test.ts); `another` is a second counter
// on the same database, as a second API process has. One database for the file; keys differ per case.
const db = await testDatabase(t);

rateLimitCounterContract(t, async () => ({
  counter: postgresRateLimitCounter(db.pool),
  another: () => postgresRateLimitCounter(db.pool),
}));
