import t from 'tap';
import { dataExportStoreContract } from '../../../contracts/accounts/data-export-store.ts';
import { memoryDataExportStore } from '../../../fakes/accounts/data-export-store.ts';

// The in-memory DataExportStore passes the port's behaviour suite (postgresDataExportStore passes
// the same one in test/integration/accounts/data-export-store-contract.test.ts).
let users = 0;
dataExportStoreContract(t, async () => ({ exports: memoryDataExportStore(), addUser: async () => ++users }));
