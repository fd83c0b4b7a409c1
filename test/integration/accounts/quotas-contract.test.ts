import t from 'tap';
import { postgresQuotas } from '../../../src/adapters/postgres/accounts/quotas.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { quotasContract } from '../../contracts/accounts/quotas.ts';
import { testDatabase } from '../../helpers/database.ts';

// postgresQuotas passes the Quotas port's behaviour suite, the one the in-memory fake passes
// (test/unit/fakes/accounts/quotas.test.ts). One database for the file; each case has its own accounts.
const db = await testDatabase(t);
let accounts = 0;

quotasContract(t, async (policy, clock) => ({
  quotas: postgresQuotas(db.pool, policy, clock),
  async addUser(subject) {
    accounts += 1;
    const user = await postgresUserStore(db.pool).upsert({
      email: `quotas-${accounts}@example.org`,
      passwordHash: 'not used: these accounts never log in',
      role: subject.role,
      trustLevel: subject.trustLevel,
    });
    return user.id;
  },
  missingUserId: 2_000_000_000,
}));
