import { randomBytes } from 'node:crypto';
import t from 'tap';
import { hmacTokenSigner } from '../../../../src/adapters/security/hmac-token-signer.ts';
import { tokenSignerContract } from '../../../contracts/accounts/token-signer.ts';

// hmacTokenSigner passes the TokenSigner port's behaviour suite, the one the fake passes
// (test/unit/fakes/accounts/token-signer.test.ts); each signer has a secret of its own.
tokenSignerContract(t, () => hmacTokenSigner(randomBytes(32).toString('hex')));
