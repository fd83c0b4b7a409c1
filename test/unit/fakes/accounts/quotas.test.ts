import t from 'tap';
import { quotasContract } from '../../../contracts/accounts/quotas.ts';
import { memoryQuotas } from '../../../fakes/accounts/quotas.ts';

// The in-memory Quotas passes the port's behaviour suite (postgresQuotas passes the same one in
// test/integration/accounts/quotas-contract.test.ts).
quotasContract(t, async (policy, clock) => {
  const quotas = memoryQuotas(policy, clock);
  return { quotas, addUser: async (subject) => quotas.addUser(subject), missingUserId: 999_999 };
});
