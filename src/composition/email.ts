import { sha256EmailTokens } from '../adapters/security/email-tokens.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import { kickEmailOutbox, startEmailWorker } from '../adapters/jobs/email-jobs.ts';
import { emailPages } from '../adapters/pages/email/email-pages.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import { createEmailStore } from '../adapters/postgres/email/email-store.ts';
import { createSmtpTransport } from '../adapters/smtp/mail-transport.ts';
import { createEmailAddresses } from '../application/email/email-addresses.ts';
import { createDigestSender } from '../application/email/event-digest.ts';
import type { DigestSender } from '../ports/subscriptions/digest-sender.ts';
import { createOutboxSender } from '../application/email/send-outbox.ts';
import type { FeatureWorkers, Infrastructure } from './infrastructure.ts';

// E-mail (issue 39 §2, §3): on only with SMTP_URL. The HTTP processes add addresses and queue
// mails; the worker processes send the outbox. The digest sender is the seam subscriptions call.

export function composeEmail(infra: Infrastructure, pool: DatabasePool) {
  const mail = infra.config.mail;
  const store = createEmailStore(pool);
  const email = createEmailAddresses({
    store,
    clock: infra.clock,
    tokens: sha256EmailTokens,
    enabled: mail !== undefined,
  });
  const kick = async () => {
    if (mail) await kickEmailOutbox(infra.boss);
  };
  // Handed to subscriptions (branch h39hook) when they are composed.
  const digests: DigestSender = createDigestSender({ store, enabled: mail !== undefined });
  return {
    email,
    digests,
    /** The outbox's figures for /api/health; undefined where e-mail is off. */
    outboxStatus: mail ? store : undefined,
    http: (needs: { csrfSecret: string }): HttpFeature => ({
      pages: async (app) => {
        await app.register(emailPages, { email, csrfSecret: needs.csrfSecret, kick });
      },
    }),
    workers: (): FeatureWorkers => ({
      start: async () => {
        if (!mail) return;
        const transport = createSmtpTransport(mail.smtpUrl, mail.from);
        const baseUrl =
          infra.config.publicBaseUrl ?? `http://${infra.config.host}:${String(infra.config.port)}`;
        await startEmailWorker(
          infra.boss,
          createOutboxSender({
            store,
            transport,
            clock: infra.clock,
            baseUrl,
            leaseMs: infra.config.outboxes.email.leaseMs,
            retryBaseMs: infra.config.outboxes.email.retryBaseMs,
          }),
        );
      },
      // Every minute: mails whose retry came due, and any whose job was lost with a killed worker.
      periodicTasks: [{ name: 'e-mail outbox', run: kick }],
    }),
  };
}
