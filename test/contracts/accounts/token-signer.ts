import type { Test } from 'tap';
import type { TokenClaims, TokenSigner } from '../../../src/ports/accounts/token-signer.ts';

// What every TokenSigner does, as one suite: run against hmacTokenSigner
// (test/unit/adapters/security/token-signer-contract.test.ts) and against the fake the use-case
// tests use (test/unit/fakes/accounts/token-signer.test.ts). `make` gives a signer with a secret of
// its own each time.

const NOW = new Date('2030-01-01T12:00:00.000Z');
const iat = NOW.getTime() / 1000;
const CLAIMS: TokenClaims = { sub: 42, sid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301', iat, exp: iat + 3600 };

export function tokenSignerContract(t: Test, make: () => TokenSigner): void {
  t.test('a token verifies to its claims until it expires', async (t) => {
    const signer = make();
    const token = signer.sign(CLAIMS);
    t.same(signer.verify(token, NOW), { ok: true, claims: CLAIMS });
    t.same(signer.verify(token, new Date((CLAIMS.exp - 1) * 1000)), { ok: true, claims: CLAIMS });
    t.same(
      signer.verify(token, new Date(CLAIMS.exp * 1000)),
      { ok: false, reason: 'expired' },
      'at exp it is over',
    );
  });

  t.test('a changed token, or one of another signer, is invalid', async (t) => {
    const signer = make();
    const token = signer.sign(CLAIMS);
    const middle = Math.floor(token.length / 2);
    const changed = `${token.slice(0, middle)}${token[middle] === 'A' ? 'B' : 'A'}${token.slice(middle + 1)}`;
    t.same(signer.verify(changed, NOW), { ok: false, reason: 'invalid' });
    t.same(signer.verify(`${token}x`, NOW), { ok: false, reason: 'invalid' });
    t.same(make().verify(token, NOW), { ok: false, reason: 'invalid' });
    for (const garbage of ['', 'abc', 'a.b.c'])
      t.same(signer.verify(garbage, NOW), { ok: false, reason: 'invalid' }, JSON.stringify(garbage));
  });

  t.test('claims that name no session of ours are invalid even when signed', async (t) => {
    const signer = make();
    t.same(signer.verify(signer.sign({ ...CLAIMS, sid: 'not-a-uuid' }), NOW), {
      ok: false,
      reason: 'invalid',
    });
    t.same(signer.verify(signer.sign({ ...CLAIMS, sub: 1.5 }), NOW), { ok: false, reason: 'invalid' });
  });
}
