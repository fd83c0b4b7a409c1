import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TokenCheck, TokenClaims, TokenSigner } from '../../ports/token-signer.ts';

// Login tokens are JWTs (HS256) so that Payload-style clients can read `exp`; the signature is an
// HMAC with SESSION_SECRET, compared in constant time. Only HS256 is accepted (no `alg: none`).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(text: string | Buffer): string {
  return Buffer.from(text).toString('base64url');
}

export function hmacTokenSigner(secret: string): TokenSigner {
  const mac = (data: string) => createHmac('sha256', secret).update(data).digest();
  return {
    sign(claims: TokenClaims): string {
      const body = `${HEADER}.${base64url(JSON.stringify(claims))}`;
      return `${body}.${mac(body).toString('base64url')}`;
    },
    verify(token: string, now: Date): TokenCheck {
      const parts = token.split('.');
      if (parts.length !== 3 || parts[0] !== HEADER) return { ok: false, reason: 'invalid' };
      const [header, payload, signature] = parts as [string, string, string];
      const expected = mac(`${header}.${payload}`);
      const given = Buffer.from(signature, 'base64url');
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return { ok: false, reason: 'invalid' };
      let claims: TokenClaims;
      try {
        claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims;
      } catch {
        return { ok: false, reason: 'invalid' };
      }
      if (
        typeof claims.sub !== 'number' ||
        typeof claims.sid !== 'string' ||
        typeof claims.exp !== 'number' ||
        // Sessions are keyed by UUID: anything else signed with the secret is not ours to look up.
        !UUID.test(claims.sid) ||
        !Number.isSafeInteger(claims.sub)
      ) {
        return { ok: false, reason: 'invalid' };
      }
      if (claims.exp * 1000 <= now.getTime()) return { ok: false, reason: 'expired' };
      return { ok: true, claims };
    },
  };
}
