import t from 'tap';
import { sessionStoreContract } from '../../../contracts/accounts/session-store.ts';
import { memoryAccounts } from '../../../fakes/accounts/accounts.ts';

// The in-memory SessionStore passes the port's behaviour suite (postgresSessionStore passes the same
// one in test/integration/accounts/session-store-contract.test.ts).
sessionStoreContract(t, async () => memoryAccounts());
