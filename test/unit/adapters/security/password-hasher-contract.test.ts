import t from 'tap';
import { scryptPasswordHasher } from '../../../../src/adapters/security/scrypt-password-hasher.ts';
import { passwordHasherContract } from '../../../contracts/accounts/password-hasher.ts';

// scryptPasswordHasher passes the PasswordHasher port's behaviour suite, the one the fast fake passes
// (test/unit/fakes/accounts/password-hasher.test.ts). Cheap parameters: the suite is about
// behaviour, and the parameters travel with each hash.
passwordHasherContract(t, () => scryptPasswordHasher({ N: 1024 }));
