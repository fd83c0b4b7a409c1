import { randomBytes } from 'node:crypto';
import type { TokenClaims, TokenSigner } from '../../../src/ports/accounts/token-signer.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A TokenSigner that remembers what it signed instead of signing it: a token is an opaque name for
 * claims this signer issued, so a token from another signer (another secret) or an altered one is
 * invalid, and the claims are checked as hmacTokenSigner checks them (a session id that is no UUID
 * is not ours; expiry against the clock given). It passes the same behaviour suite
 * (test/contracts/accounts/token-signer.ts). `issued` lists the claims signed, in order.
 */
export function memoryTokenSigner(): TokenSigner & { issued: TokenClaims[] } {
  const secret = randomBytes(6).toString('base64url');
  const issued: TokenClaims[] = [];
  const byToken = new Map<string, TokenClaims>();
  return {
    issued,
    sign(claims) {
      const token = `token.${secret}.${issued.length + 1}`;
      issued.push({ ...claims });
      byToken.set(token, { ...claims });
      return token;
    },
    verify(token, now) {
      const claims = byToken.get(token);
      if (!claims || !UUID.test(claims.sid) || !Number.isSafeInteger(claims.sub)) {
        return { ok: false, reason: 'invalid' };
      }
      if (claims.exp * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
      return { ok: true, claims: { ...claims } };
    },
  };
}
