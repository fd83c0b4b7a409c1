// Sends a webhook delivery (issue 39 §2): one signed POST through the SSRF guard.

/** What one attempt came to: the receiver's status (null: no answer), how long it took, why it failed. */
export type SendOutcome = { statusCode: number | null; durationMs: number; error: string | null };

export interface WebhookSender {
  /** Refuses (ValidationError on `url`) a URL whose host is, or resolves to, a private or reserved address. */
  checkDestination(url: string): Promise<void>;
  /** POSTs `body` signed with `secret` under the delivery id `id` (the same id on every retry). */
  send(input: { url: string; secret: string; id: string; body: string }): Promise<SendOutcome>;
}
