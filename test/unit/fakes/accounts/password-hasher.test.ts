import t from 'tap';
import { passwordHasherContract } from '../../../contracts/accounts/password-hasher.ts';
import { plainPasswordHasher } from '../../../fakes/accounts/password-hasher.ts';

// The fast PasswordHasher passes the port's behaviour suite (scryptPasswordHasher passes the same
// one in test/unit/adapters/security/password-hasher-contract.test.ts).
passwordHasherContract(t, plainPasswordHasher);
