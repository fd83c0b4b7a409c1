import type { OutboxFacts } from '../../domain/site/health.ts';
import type { MailPayload } from '../../domain/email/messages.ts';

// Where addresses, tokens and the outbox live (src/adapters/postgres/email/email-store.ts).

export type EmailAddressView = {
  id: string;
  address: string;
  confirmed: boolean;
  /** The latest confirmation or alert mail to it: its status and SMTP error, if any. */
  lastMail: { status: 'queued' | 'sending' | 'sent' | 'failed'; error: string | null } | null;
};

/**
 * A claimed mail. `lease` is the claim's own (the lease's end as the store wrote it): sent and failed
 * are recorded only while the mail still holds it, so a sender that outlived its lease, the mail
 * claimed again by another, cannot overwrite the newer claim's outcome.
 */
export type OutboxMail = { id: string; to: string; attempts: number; payload: MailPayload; lease: string };

export interface EmailStore {
  list(userId: number): Promise<EmailAddressView[]>;
  /** Adds the address with its pending confirmation and queues the confirmation mail, in one transaction. */
  add(
    userId: number,
    address: string,
    confirmation: { hash: Buffer; token: string; expiresAt: Date },
    limits: { maxAddresses: number; confirmationsPerHour: number },
  ): Promise<'added' | 'exists' | 'too-many' | 'rate-limited'>;
  /** A new confirmation token for an unconfirmed address of the user, and its mail. */
  resend(
    userId: number,
    addressId: string,
    confirmation: { hash: Buffer; token: string; expiresAt: Date },
    confirmationsPerHour: number,
  ): Promise<'queued' | 'not-found' | 'rate-limited'>;
  remove(userId: number, addressId: string): Promise<boolean>;
  /** Confirms the address whose unexpired token has this hash; the token works once. */
  confirm(tokenHash: Buffer): Promise<{ address: string } | null>;
  /** The address and stream an unsubscribe token stops, or null. */
  findUnsubscribe(tokenHash: Buffer): Promise<{ address: string; stream: string } | null>;
  unsubscribe(tokenHash: Buffer): Promise<boolean>;
  /** Queues a digest to a confirmed address of the owner that has not left the stream. */
  queueDigest(
    userId: number,
    addressId: string,
    stream: string,
    payload: (unsubscribeToken: string) => MailPayload,
  ): Promise<'queued' | 'address-not-confirmed'>;
  /** Claims the next due mail for leaseMs (a worker that dies leaves it to the next after the lease). */
  claim(leaseMs: number): Promise<OutboxMail | null>;
  sent(mail: Pick<OutboxMail, 'id' | 'lease'>): Promise<void>;
  /** A failed attempt: retried at retryAt, or given up when retryAt is null. */
  failed(mail: Pick<OutboxMail, 'id' | 'lease'>, error: string, retryAt: Date | null): Promise<void>;
  /** Mails in the last hour by status, for /api/health. */
  recentStatus(): Promise<OutboxFacts>;
}
