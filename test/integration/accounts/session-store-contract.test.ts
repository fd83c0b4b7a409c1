import t from 'tap';
import { postgresActorDirectory } from '../../../src/adapters/postgres/accounts/actor-directory.ts';
import { postgresSessionStore } from '../../../src/adapters/postgres/accounts/session-store.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { sessionStoreContract } from '../../contracts/accounts/session-store.ts';
import { testDatabase } from '../../helpers/database.ts';

// postgresSessionStore passes the SessionStore port's behaviour suite, the one the in-memory fake
// passes (test/unit/fakes/accounts/session-store.test.ts). One database for the file; each case has
// accounts of its own.
const db = await testDatabase(t);

sessionStoreContract(t, async () => ({
  users: postgresUserStore(db.pool),
  sessions: postgresSessionStore(db.pool),
  actors: postgresActorDirectory(db.pool),
}));
