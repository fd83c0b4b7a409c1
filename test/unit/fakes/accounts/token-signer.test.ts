import t from 'tap';
import { tokenSignerContract } from '../../../contracts/accounts/token-signer.ts';
import { memoryTokenSigner } from '../../../fakes/accounts/token-signer.ts';

// The remembering TokenSigner passes the port's behaviour suite (hmacTokenSigner passes the same
// one in test/unit/adapters/security/token-signer-contract.test.ts).
tokenSignerContract(t, memoryTokenSigner);
