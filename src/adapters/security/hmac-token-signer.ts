import { createSigner, createVerifier } from 'fast-jwt';
import type { TokenCheck, TokenClaims, TokenSigner } from '../../ports/accounts/token-signer.ts';
import { isUuid } from '../../domain/uuid.ts';

// Login tokens are JWTs (HS256) so that Payload-style clients can read `exp`. fast-jwt signs and
// checks them (synchronously, so the TokenSigner port stays synchronous; jose is async only); only
// HS256 is accepted (no `alg: none`, no public-key confusion). The header and payload it writes are
// byte for byte those of the earlier hand-written signer, so tokens issued before still verify.
// Expiry is checked here against the injected clock rather than by the library's Date.now().

export function hmacTokenSigner(secret: string): TokenSigner {
  const signToken = createSigner({ key: secret, algorithm: 'HS256' });
  const decodeVerified = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    ignoreExpiration: true,
    ignoreNotBefore: true,
    cache: false,
  });
  return {
    sign(claims: TokenClaims): string {
      // Key order sub, sid, iat, exp: the payload's JSON is what earlier tokens carried.
      return signToken({ sub: claims.sub, sid: claims.sid, iat: claims.iat, exp: claims.exp });
    },
    verify(token: string, now: Date): TokenCheck {
      let claims: TokenClaims;
      try {
        claims = decodeVerified(token) as TokenClaims;
      } catch {
        return { ok: false, reason: 'invalid' };
      }
      if (
        typeof claims !== 'object' ||
        claims === null ||
        typeof claims.sub !== 'number' ||
        typeof claims.sid !== 'string' ||
        typeof claims.exp !== 'number' ||
        // Sessions are keyed by UUID: anything else signed with the secret is not ours to look up.
        !isUuid(claims.sid) ||
        !Number.isSafeInteger(claims.sub)
      ) {
        return { ok: false, reason: 'invalid' };
      }
      if (claims.exp * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
      return { ok: true, claims: { sub: claims.sub, sid: claims.sid, iat: claims.iat, exp: claims.exp } };
    },
  };
}
