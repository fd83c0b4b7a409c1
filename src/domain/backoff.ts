// The outboxes' retry wait (webhook deliveries: src/domain/subscriptions/subscriptions.ts; e-mail:
// src/domain/email/messages.ts): exponential from a base, capped at an hour. A jitter share (from the
// caller's random source) spreads the wait over its upper half, so receivers that failed together
// are not all retried at the same moment; without it the wait is the ceiling itself.

const MAX_WAIT_MS = 3_600_000;

/** The wait before attempt `attempt + 1` (attempt ≥ 1). */
export function backoffMs(attempt: number, baseMs: number, jitter?: number): number {
  const ceiling = Math.min(MAX_WAIT_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  return jitter === undefined ? ceiling : Math.round(ceiling / 2 + (ceiling / 2) * jitter);
}
