import t from 'tap';
import { postgresDataExportStore } from '../../../src/adapters/postgres/accounts/data-export-store.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { dataExportStoreContract } from '../../contracts/accounts/data-export-store.ts';
import { addUser } from '../../contracts/accounts/accounts-harness.ts';
import { testDatabase } from '../../helpers/database.ts';

// postgresDataExportStore passes the DataExportStore port's behaviour suite, the one the in-memory
// fake passes (test/unit/fakes/accounts/data-export-store.test.ts). One database for the file; each
// case has accounts of its own.
const db = await testDatabase(t);

dataExportStoreContract(t, async () => ({
  exports: postgresDataExportStore(db.pool),
  addUser: async () => (await addUser(postgresUserStore(db.pool), 'exporter')).id,
}));
