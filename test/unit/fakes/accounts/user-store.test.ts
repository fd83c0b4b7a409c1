import t from 'tap';
import { userStoreContract } from '../../../contracts/accounts/user-store.ts';
import { memoryAccounts } from '../../../fakes/accounts/accounts.ts';

// The in-memory UserStore (and ActorDirectory) passes the port's behaviour suite (postgresUserStore
// passes the same one in test/integration/accounts/user-store-contract.test.ts).
userStoreContract(t, async () => memoryAccounts());
