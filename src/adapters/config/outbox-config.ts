import { milliseconds, type Read } from './budget-config.ts';

// The two outboxes' timing from the environment (docs/operations.md, "Subscriptions" and
// "E-mail"): the first retry's wait (doubling after each failure, at most an hour) and the lease a
// worker holds on what it claimed (a killed worker's claims come back after it). A lease shorter
// than a send would let a second worker send the same delivery while the first still does, so the
// bounds keep it above the senders' own timeouts.

type OutboxTiming = { retryBaseMs: number; leaseMs: number };

export type OutboxConfig = {
  /** Subscription webhooks and digests (WEBHOOK_RETRY_BASE_MS, WEBHOOK_LEASE_MS). */
  deliveries: OutboxTiming;
  /** The e-mail outbox (EMAIL_RETRY_BASE_MS, EMAIL_LEASE_MS). */
  email: OutboxTiming;
};

export const DEFAULT_OUTBOXES: OutboxConfig = {
  deliveries: { retryBaseMs: 5_000, leaseMs: 60_000 },
  email: { retryBaseMs: 30_000, leaseMs: 5 * 60_000 },
};

export function loadOutboxConfig(read: Read): OutboxConfig {
  const hour = 3_600_000;
  return {
    deliveries: {
      retryBaseMs: read(
        'WEBHOOK_RETRY_BASE_MS',
        milliseconds(100, hour),
        DEFAULT_OUTBOXES.deliveries.retryBaseMs,
      ),
      // Above the webhook POST's 10 s timeout.
      leaseMs: read('WEBHOOK_LEASE_MS', milliseconds(15_000, hour), DEFAULT_OUTBOXES.deliveries.leaseMs),
    },
    email: {
      retryBaseMs: read('EMAIL_RETRY_BASE_MS', milliseconds(1_000, hour), DEFAULT_OUTBOXES.email.retryBaseMs),
      // Above a slow SMTP exchange (nodemailer's greeting and socket timeouts are 30 s and 60 s).
      leaseMs: read('EMAIL_LEASE_MS', milliseconds(120_000, hour), DEFAULT_OUTBOXES.email.leaseMs),
    },
  };
}
