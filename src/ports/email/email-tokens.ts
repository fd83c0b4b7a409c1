// The tokens of the e-mail links (confirmation, one-click unsubscribe): random, kept only as a hash
// (src/adapters/security/email-tokens.ts; why a plain hash is enough: domain/email/tokens.ts).

export interface EmailTokens {
  /** A new token for a link and the hash the database keeps of it. */
  issue(): { token: string; hash: Buffer };
  /** The hash of a token taken from a link, to look it up. */
  hash(token: string): Buffer;
}
