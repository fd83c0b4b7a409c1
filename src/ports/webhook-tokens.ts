/** Webhook tokens (scrapers and scheduled imports): 64 hex from 32 random bytes, stored only as a hash. */
export interface WebhookTokens {
  /** A new token and the hash to store; the token itself is shown once. */
  generate(): { token: string; hash: string };
  hash(token: string): string;
}
