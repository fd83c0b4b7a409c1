/** The claims a login token carries: the user, the session that can revoke it, and its lifetime. */
export type TokenClaims = { sub: number; sid: string; iat: number; exp: number };

export type TokenCheck = { ok: true; claims: TokenClaims } | { ok: false; reason: 'invalid' | 'expired' };

export interface TokenSigner {
  sign(claims: TokenClaims): string;
  verify(token: string, now: Date): TokenCheck;
}
