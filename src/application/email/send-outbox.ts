import { MAX_SEND_ATTEMPTS, renderMail, retryDelayMs } from '../../domain/email/messages.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EmailStore } from '../../ports/email/email-store.ts';
import type { MailTransport } from '../../ports/email/mail-transport.ts';

// The outbox's sender (run by the e-mail worker, src/adapters/jobs/email-jobs.ts): claims due mails
// one at a time, renders and sends each, and records sent, a retry with backoff, or failed after
// MAX_SEND_ATTEMPTS with the SMTP error. A claim is a lease: if this process dies mid-send the mail
// is claimed again when the lease ends, so a mail may go twice but is never lost; its outcome is
// recorded only while the claim still holds the lease (EmailStore.sent and failed).

/** Longer than any SMTP exchange the transport allows (src/adapters/smtp/mail-transport.ts bounds each wait). */
const SEND_LEASE_MS = 5 * 60_000;

export type OutboxSender = { drain(options?: { max?: number }): Promise<{ sent: number; failed: number }> };

export function createOutboxSender(deps: {
  store: EmailStore;
  transport: MailTransport;
  clock: Clock;
  baseUrl: string;
  leaseMs?: number;
  /** The first retry's wait (EMAIL_RETRY_BASE_MS); the domain's default without it. */
  retryBaseMs?: number;
}): OutboxSender {
  const { store, transport, clock, baseUrl } = deps;
  return {
    async drain({ max = 100 } = {}) {
      let sent = 0;
      let failed = 0;
      for (let i = 0; i < max; i += 1) {
        const mail = await store.claim(deps.leaseMs ?? SEND_LEASE_MS);
        if (!mail) break;
        const rendered = renderMail(mail.payload, baseUrl);
        const headers: Record<string, string> = {};
        if (rendered.unsubscribeUrl) {
          // RFC 8058: the https URL takes a POST with this body, no session, no confirmation step.
          headers['List-Unsubscribe'] = `<${rendered.unsubscribeUrl}>`;
          headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
        }
        try {
          await transport.send({
            to: mail.to,
            subject: rendered.subject,
            text: rendered.text,
            html: rendered.html,
            headers,
          });
          await store.sent(mail);
          sent += 1;
        } catch (error) {
          const retryAt =
            mail.attempts >= MAX_SEND_ATTEMPTS
              ? null
              : new Date(clock.now().getTime() + retryDelayMs(mail.attempts, deps.retryBaseMs));
          await store.failed(mail, (error as Error).message || String(error), retryAt);
          failed += 1;
        }
      }
      return { sent, failed };
    },
  };
}
